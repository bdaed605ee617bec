/**
 * The Blocklink client for game backends (Deno, Node 20+): one method per operation of the API
 * document (named by its `operationId`, as the Luau SDK names them), typed by the generated
 * `schema.ts` through openapi-fetch, with the client rules of `rules.ts` and errors as values.
 *
 * The API key comes from `BLOCKLINK_API_KEY` unless given; it lives in a private field, is sent
 * only in the `x-api-key` header to `baseUrl`, and never appears in an error, a log or an
 * inspection of the client.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, operations, paths } from "./schema.ts";
import { holdUntil, MAX_ATTEMPTS, RETRY_DELAYS_MS, shouldRetry } from "./rules.ts";
import type { ClientError, EventType, OperationId, Result } from "./result.ts";
import { EventReader, type EventReaderOptions } from "./feed.ts";
import { sleep } from "./sleep.ts";

/** Options of `new Blocklink()`. */
export interface BlocklinkOptions {
  /** The service's origin, such as `https://play.example.com`. */
  baseUrl: string;
  /** The project API key; `BLOCKLINK_API_KEY` from the environment when left out. */
  apiKey?: string;
  /** How long one attempt may take, in ms (default 30,000: a payout answers within 20 s). */
  timeoutMs?: number;
  /** The fetch to send with (default: the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** Options every call takes. */
export interface CallOptions {
  signal?: AbortSignal;
}

type Body<Op extends OperationId> = operations[Op] extends
  { requestBody: { content: { "application/json": infer B } } } ? B : never;
type Query<Op extends OperationId> = NonNullable<
  operations[Op]["parameters"]["query"]
>;
type Schemas = components["schemas"];
type Raw = { data?: unknown; error?: unknown; response: Response };

/** A client of one project. */
export class Blocklink {
  readonly #api: Client<paths>;
  readonly #timeoutMs: number;
  #heldUntil = 0;

  constructor(options: BlocklinkOptions) {
    const apiKey = options.apiKey ?? readEnv("BLOCKLINK_API_KEY");
    if (!apiKey) {
      throw new TypeError(
        "Blocklink needs an API key: set BLOCKLINK_API_KEY or pass apiKey",
      );
    }
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      headers: { "x-api-key": apiKey },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  /** `GET /health` */
  getHealth(options?: CallOptions): Promise<Result<"getHealth">> {
    return this.#call((init) => this.#api.GET("/health", init), options);
  }

  /** `GET /v1/project`: the key's project. */
  getProject(options?: CallOptions): Promise<Result<"getProject">> {
    return this.#call((init) => this.#api.GET("/v1/project", init), options);
  }

  /** `GET /v1/players/{userId}/wallet`: the wallet a player linked, from the service's store. */
  getPlayerWallet(
    userId: number,
    options?: CallOptions,
  ): Promise<Result<"getPlayerWallet">> {
    const params = { path: { userId } };
    return this.#call(
      (init) => this.#api.GET("/v1/players/{userId}/wallet", { ...init, params }),
      options,
    );
  }

  /** `POST /v1/players/wallets`: up to 200 players' wallets in one request. */
  getPlayerWallets(
    userIds: number[],
    options?: CallOptions,
  ): Promise<Result<"getPlayerWallets">> {
    const body = { userIds };
    return this.#call(
      (init) => this.#api.POST("/v1/players/wallets", { ...init, body }),
      options,
    );
  }

  /** `GET /v1/wallets/{address}/balance`: SOL balance. */
  getBalance(
    address: string,
    options?: CallOptions,
  ): Promise<Result<"getBalance">> {
    const params = { path: { address } };
    return this.#call(
      (init) => this.#api.GET("/v1/wallets/{address}/balance", { ...init, params }),
      options,
    );
  }

  /** `GET /v1/wallets/{address}/tokens`: token balances, or one mint's. */
  getTokens(
    address: string,
    query: Query<"getTokens"> = {},
    options?: CallOptions,
  ): Promise<Result<"getTokens">> {
    const params = { path: { address }, query };
    return this.#call(
      (init) => this.#api.GET("/v1/wallets/{address}/tokens", { ...init, params }),
      options,
    );
  }

  /** `GET /v1/wallets/{address}/assets`: NFTs owned, or one collection's. */
  getAssets(
    address: string,
    query: Query<"getAssets"> = {},
    options?: CallOptions,
  ): Promise<Result<"getAssets">> {
    const params = { path: { address }, query };
    return this.#call(
      (init) => this.#api.GET("/v1/wallets/{address}/assets", { ...init, params }),
      options,
    );
  }

  /** `GET /v1/signatures/{signature}`: a transaction signature's status. */
  getSignature(
    signature: string,
    options?: CallOptions,
  ): Promise<Result<"getSignature">> {
    const params = { path: { signature } };
    return this.#call(
      (init) => this.#api.GET("/v1/signatures/{signature}", { ...init, params }),
      options,
    );
  }

  /** `POST /v1/tx/transfer-sol`; retried with the same key, so it pays at most once. */
  transferSol(
    body: Body<"transferSol">,
    options?: CallOptions,
  ): Promise<Result<"transferSol">> {
    return this.#call(
      (init) => this.#api.POST("/v1/tx/transfer-sol", { ...init, body }),
      options,
    );
  }

  /** `POST /v1/tx/transfer-token` */
  transferToken(
    body: Body<"transferToken">,
    options?: CallOptions,
  ): Promise<Result<"transferToken">> {
    return this.#call(
      (init) => this.#api.POST("/v1/tx/transfer-token", { ...init, body }),
      options,
    );
  }

  /** `POST /v1/tx/mint-token` */
  mintToken(
    body: Body<"mintToken">,
    options?: CallOptions,
  ): Promise<Result<"mintToken">> {
    return this.#call(
      (init) => this.#api.POST("/v1/tx/mint-token", { ...init, body }),
      options,
    );
  }

  /** `GET /v1/tx/{idempotencyKey}`: the authoritative status of a payout. */
  getTx(
    idempotencyKey: string,
    options?: CallOptions & Background,
  ): Promise<Result<"getTx">> {
    const params = { path: { idempotencyKey } };
    return this.#call(
      (init) => this.#api.GET("/v1/tx/{idempotencyKey}", { ...init, params }),
      options,
    );
  }

  /** `GET /v1/tx`: the project's payouts, newest first; pass `next` as `after`. */
  listTx(
    query: Query<"listTx"> = {},
    options?: CallOptions,
  ): Promise<Result<"listTx">> {
    const params = { query };
    return this.#call(
      (init) => this.#api.GET("/v1/tx", { ...init, params }),
      options,
    );
  }

  /** `GET /v1/events`: one page of the event feed; `events()` follows it for you. */
  listEvents(
    query: Query<"listEvents"> = {},
    options?: CallOptions & Background,
  ): Promise<Result<"listEvents">> {
    const params = { query };
    return this.#call(
      (init) => this.#api.GET("/v1/events", { ...init, params }),
      options,
    );
  }

  /**
   * Waits until the payout is `confirmed` or `failed`, asking its status every `pollMs` (2,000)
   * for at most `timeoutMs` (60,000), then `timeout`. A quota answer holds the polls (rule 2).
   */
  async waitForTx(
    idempotencyKey: string,
    options: CallOptions & { timeoutMs?: number; pollMs?: number } = {},
  ): Promise<Result<"getTx", Schemas["TxResult"]>> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      await sleep(
        Math.min(this.#heldUntil, deadline) - Date.now(),
        options.signal,
      );
      if (Date.now() >= deadline) break;
      const answer = await this.getTx(idempotencyKey, {
        ...options,
        background: true,
      });
      if (
        answer.ok &&
        (answer.data.status === "confirmed" || answer.data.status === "failed")
      ) {
        return answer;
      }
      if (!answer.ok && !isTransient(answer)) return answer;
      await sleep(
        Math.min(options.pollMs ?? 2_000, deadline - Date.now()),
        options.signal,
      );
      if (Date.now() >= deadline) break;
    }
    return {
      ok: false,
      status: 0,
      code: "timeout",
      message: "The payout was not final in time",
      httpStatus: null,
    };
  }

  /**
   * Follows the event feed: every event recorded after the reader starts (or after `after`, a
   * cursor saved from `cursor()`), each once and in order. `types` keeps only those types.
   */
  events<T extends EventType = EventType>(
    options: EventReaderOptions<T> = {},
  ): EventReader<T> {
    return new EventReader(
      {
        read: (query, signal) =>
          this.listEvents(query, {
            background: true,
            ...(signal ? { signal } : {}),
          }),
        heldUntil: () => this.#heldUntil,
      },
      options,
    );
  }

  /** Runs one call with the retry rules; a quota answer also holds background work. */
  async #call<Op extends OperationId>(
    send: (init: { signal: AbortSignal; parseAs: "text" }) => Promise<Raw>,
    options: (CallOptions & Background) | undefined,
  ): Promise<Result<Op>> {
    for (let attempt = 1;; attempt++) {
      const signals = [AbortSignal.timeout(this.#timeoutMs)];
      if (options?.signal) signals.push(options.signal);
      let result: Result<Op>;
      try {
        result = toResult<Op>(
          await send({ signal: AbortSignal.any(signals), parseAs: "text" }),
        );
      } catch (error) {
        if (options?.signal?.aborted) throw error;
        const message = `No answer from the service: ${(error as Error).name}`;
        result = {
          ok: false,
          status: 0,
          code: "network_error",
          message,
          httpStatus: null,
        };
      }
      if (result.ok) return result;
      const failure = result as {
        status: number;
        code: string;
        httpStatus?: number | null;
      };
      const until = holdUntil(failure.code, Date.now());
      if (until !== null) this.#heldUntil = Math.max(this.#heldUntil, until);
      const status = failure.status === 0 ? failure.httpStatus ?? null : failure.status;
      const code = failure.status === 0 ? null : failure.code;
      const retried = shouldRetry(status, code) &&
        !(options?.background && status === 429);
      if (!retried || attempt >= MAX_ATTEMPTS) return result;
      await sleep(RETRY_DELAYS_MS[attempt - 1]!, options?.signal);
    }
  }
}

/** A call made by the client for itself: not retried on a 429, which holds it instead. */
interface Background {
  background?: boolean;
}

/** Turns openapi-fetch's answer (read as text) into a result. */
function toResult<Op extends OperationId>(raw: Raw): Result<Op> {
  const { status } = raw.response;
  const text = typeof raw.data === "string" ? raw.data : raw.error;
  const body = typeof text === "string" ? parseJson(text) : text;
  if (raw.response.ok) {
    if (status === 200 && typeof body === "object" && body !== null) {
      return { ok: true, status: 200, data: body } as Result<Op>;
    }
    return clientError(
      status,
      "invalid_response",
      "The answer is not the service's JSON",
    );
  }
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (typeof error?.code === "string" && typeof error.message === "string") {
    return {
      ok: false,
      status,
      code: error.code,
      message: error.message,
    } as Result<Op>;
  }
  return clientError(
    status,
    "http_error",
    `HTTP ${status} without the service's error body`,
  );
}

function clientError<Op extends OperationId>(
  httpStatus: number,
  code: "invalid_response" | "http_error",
  message: string,
): Result<Op> {
  const error: ClientError = { ok: false, status: 0, code, message, httpStatus };
  return error;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** Whether waiting may change the answer: no answer, a 5xx, or a limit that frees up. */
function isTransient(error: { status: number; code: string }): boolean {
  return error.code === "network_error" || error.code === "http_error" ||
    error.status >= 500 || error.code === "rate_limited" ||
    error.code === "feed_rate_limited" || error.code === "daily_quota_exceeded";
}

function readEnv(name: string): string | undefined {
  const runtime = globalThis as {
    Deno?: { env: { get(name: string): string | undefined } };
    process?: { env: Record<string, string | undefined> };
  };
  return runtime.Deno ? runtime.Deno.env.get(name) : runtime.process?.env[name];
}

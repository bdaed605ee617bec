/**
 * The Blocklink client for game backends (Deno, Node 20+): one method per operation of the API
 * document (named by its `operationId`, as the Luau SDK names them), typed by the generated
 * `schema.ts` through openapi-fetch, with errors as values. Calls go through `transport.ts`,
 * which holds the API key and runs the client rules.
 */
import type { components, operations } from "./schema.ts";
import type { EventType, OperationId, Result } from "./result.ts";
import {
  type Background,
  type BlocklinkOptions,
  type CallOptions,
  Transport,
} from "./transport.ts";
import { EventReader, type EventReaderOptions } from "./feed.ts";
import { sleep } from "./sleep.ts";

type Body<Op extends OperationId> = operations[Op] extends
  { requestBody: { content: { "application/json": infer B } } } ? B : never;
type Query<Op extends OperationId> = NonNullable<
  operations[Op]["parameters"]["query"]
>;
type Schemas = components["schemas"];

/** A client of one project. */
export class Blocklink {
  readonly #transport: Transport;

  constructor(options: BlocklinkOptions) {
    this.#transport = new Transport(options);
  }

  /** `GET /health` */
  getHealth(options?: CallOptions): Promise<Result<"getHealth">> {
    return this.#transport.call((api, init) => api.GET("/health", init), options);
  }

  /** `GET /v1/project`: the key's project. */
  getProject(options?: CallOptions): Promise<Result<"getProject">> {
    return this.#transport.call((api, init) => api.GET("/v1/project", init), options);
  }

  /** `GET /v1/players/{userId}/wallet`: the wallet a player linked, from the service's store. */
  getPlayerWallet(
    userId: number,
    options?: CallOptions,
  ): Promise<Result<"getPlayerWallet">> {
    const params = { path: { userId } };
    return this.#transport.call(
      (api, init) => api.GET("/v1/players/{userId}/wallet", { ...init, params }),
      options,
    );
  }

  /** `POST /v1/players/wallets`: up to 200 players' wallets in one request. */
  getPlayerWallets(
    userIds: number[],
    options?: CallOptions,
  ): Promise<Result<"getPlayerWallets">> {
    const body = { userIds };
    return this.#transport.call(
      (api, init) => api.POST("/v1/players/wallets", { ...init, body }),
      options,
    );
  }

  /** `GET /v1/wallets/{address}/balance`: SOL balance. */
  getBalance(
    address: string,
    options?: CallOptions,
  ): Promise<Result<"getBalance">> {
    const params = { path: { address } };
    return this.#transport.call(
      (api, init) => api.GET("/v1/wallets/{address}/balance", { ...init, params }),
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
    return this.#transport.call(
      (api, init) => api.GET("/v1/wallets/{address}/tokens", { ...init, params }),
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
    return this.#transport.call(
      (api, init) => api.GET("/v1/wallets/{address}/assets", { ...init, params }),
      options,
    );
  }

  /** `GET /v1/signatures/{signature}`: a transaction signature's status. */
  getSignature(
    signature: string,
    options?: CallOptions,
  ): Promise<Result<"getSignature">> {
    const params = { path: { signature } };
    return this.#transport.call(
      (api, init) => api.GET("/v1/signatures/{signature}", { ...init, params }),
      options,
    );
  }

  /** `POST /v1/tx/transfer-sol`; retried with the same key, so it pays at most once. */
  transferSol(
    body: Body<"transferSol">,
    options?: CallOptions,
  ): Promise<Result<"transferSol">> {
    return this.#transport.call(
      (api, init) => api.POST("/v1/tx/transfer-sol", { ...init, body }),
      options,
    );
  }

  /** `POST /v1/tx/transfer-token` */
  transferToken(
    body: Body<"transferToken">,
    options?: CallOptions,
  ): Promise<Result<"transferToken">> {
    return this.#transport.call(
      (api, init) => api.POST("/v1/tx/transfer-token", { ...init, body }),
      options,
    );
  }

  /** `POST /v1/tx/mint-token` */
  mintToken(
    body: Body<"mintToken">,
    options?: CallOptions,
  ): Promise<Result<"mintToken">> {
    return this.#transport.call(
      (api, init) => api.POST("/v1/tx/mint-token", { ...init, body }),
      options,
    );
  }

  /**
   * `POST /v1/tx/batch`: up to 50 payouts in one request, each answered as its single route would
   * (`result` or `error`); retried with the same keys, so each item pays at most once.
   */
  transferBatch(
    body: Body<"transferBatch">,
    options?: CallOptions,
  ): Promise<Result<"transferBatch">> {
    return this.#transport.call(
      (api, init) => api.POST("/v1/tx/batch", { ...init, body }),
      options,
    );
  }

  /** `GET /v1/tx/{idempotencyKey}`: the authoritative status of a payout. */
  getTx(
    idempotencyKey: string,
    options?: CallOptions & Background,
  ): Promise<Result<"getTx">> {
    const params = { path: { idempotencyKey } };
    return this.#transport.call(
      (api, init) => api.GET("/v1/tx/{idempotencyKey}", { ...init, params }),
      options,
    );
  }

  /** `GET /v1/tx`: the project's payouts, newest first; pass `next` as `after`. */
  listTx(
    query: Query<"listTx"> = {},
    options?: CallOptions,
  ): Promise<Result<"listTx">> {
    const params = { query };
    return this.#transport.call(
      (api, init) => api.GET("/v1/tx", { ...init, params }),
      options,
    );
  }

  /**
   * `POST /v1/rewards`: a reward to a player by user id, held until they link a wallet (paid at
   * once when they have one); retried with the same key, so it is granted and paid at most once.
   */
  grantReward(
    body: Body<"grantReward">,
    options?: CallOptions,
  ): Promise<Result<"grantReward">> {
    return this.#transport.call(
      (api, init) => api.POST("/v1/rewards", { ...init, body }),
      options,
    );
  }

  /** `GET /v1/rewards/{key}`: a reward as it stands. */
  getReward(key: string, options?: CallOptions): Promise<Result<"getReward">> {
    const params = { path: { key } };
    return this.#transport.call(
      (api, init) => api.GET("/v1/rewards/{key}", { ...init, params }),
      options,
    );
  }

  /** `POST /v1/rewards/{key}/cancel`: cancels a reward still held. */
  cancelReward(
    key: string,
    options?: CallOptions,
  ): Promise<Result<"cancelReward">> {
    const params = { path: { key } };
    return this.#transport.call(
      (api, init) => api.POST("/v1/rewards/{key}/cancel", { ...init, params }),
      options,
    );
  }

  /** `GET /v1/players/{userId}/rewards`: a player's rewards, newest first (at most 100). */
  listPlayerRewards(
    userId: number,
    options?: CallOptions,
  ): Promise<Result<"listPlayerRewards">> {
    const params = { path: { userId } };
    return this.#transport.call(
      (api, init) => api.GET("/v1/players/{userId}/rewards", { ...init, params }),
      options,
    );
  }

  /** `GET /v1/events`: one page of the event feed; `events()` follows it for you. */
  listEvents(
    query: Query<"listEvents"> = {},
    options?: CallOptions & Background,
  ): Promise<Result<"listEvents">> {
    const params = { query };
    return this.#transport.call(
      (api, init) => api.GET("/v1/events", { ...init, params }),
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
        Math.min(this.#transport.heldUntil(), deadline) - Date.now(),
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
        heldUntil: () => this.#transport.heldUntil(),
      },
      options,
    );
  }
}

/** Whether waiting may change the answer: no answer, a 5xx, or a limit that frees up. */
function isTransient(error: { status: number; code: string }): boolean {
  return error.code === "network_error" || error.code === "http_error" ||
    error.status >= 500 || error.code === "rate_limited" ||
    error.code === "feed_rate_limited" || error.code === "daily_quota_exceeded";
}

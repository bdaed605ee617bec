/**
 * One project's connection to the service. The API key comes from `BLOCKLINK_API_KEY` unless
 * given; it is kept only inside openapi-fetch's client (never in a field of ours), sent only in
 * the `x-api-key` header to `baseUrl`, and never appears in an error, a log or an inspection of
 * the client. Every call runs with the client rules (`rules.ts`): retries, and the quota hold
 * that the client's own background work waits for.
 */
import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema.ts";
import { holdUntil, MAX_ATTEMPTS, RETRY_DELAYS_MS, shouldRetry } from "./rules.ts";
import { type OperationId, type Raw, type Result, toResult } from "./result.ts";
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

/** A call made by the client for itself: not retried on a 429, which holds it instead. */
export interface Background {
  background?: boolean;
}

/** Sends calls with the client rules. */
export class Transport {
  readonly #api: Client<paths>;
  readonly #timeoutMs: number;
  #heldUntil = 0;

  constructor(options: BlocklinkOptions) {
    const apiKey = options.apiKey ?? readEnv("BLOCKLINK_API_KEY");
    if (!apiKey) {
      throw new TypeError("Blocklink needs an API key: set BLOCKLINK_API_KEY or pass apiKey");
    }
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      headers: { "x-api-key": apiKey },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  /** Until when (Unix ms) a quota answer holds background work; in the past when it does not. */
  heldUntil(): number {
    return this.#heldUntil;
  }

  /** Runs one call with the retry rules; a quota answer also holds background work. */
  async call<Op extends OperationId>(
    send: (api: Client<paths>, init: { signal: AbortSignal; parseAs: "text" }) => Promise<Raw>,
    options: (CallOptions & Background) | undefined,
  ): Promise<Result<Op>> {
    for (let attempt = 1;; attempt++) {
      const signals = [AbortSignal.timeout(this.#timeoutMs)];
      if (options?.signal) signals.push(options.signal);
      let result: Result<Op>;
      try {
        result = toResult<Op>(
          await send(this.#api, { signal: AbortSignal.any(signals), parseAs: "text" }),
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

function readEnv(name: string): string | undefined {
  const runtime = globalThis as {
    Deno?: { env: { get(name: string): string | undefined } };
    process?: { env: Record<string, string | undefined> };
  };
  return runtime.Deno ? runtime.Deno.env.get(name) : runtime.process?.env[name];
}

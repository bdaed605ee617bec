/**
 * A fixed budget of RPC calls and answer bytes for one chain read. A wallet with thousands of token
 * accounts, or a collection scan through many batches, must not keep a request (and its memory)
 * busy without end: the read stops as soon as it would pass either limit and fails with
 * `ReadBudgetError`, which the API answers as 422 `read_budget_exceeded`.
 *
 * Bytes are counted while an answer streams in, so an oversized answer is cut off rather than held.
 * The unbounded answers (token account lists, DAS pages) are read this way; answers whose size
 * their request already bounds (a batch of at most 100 accounts) are counted after they arrive.
 */

/** Calls and bytes one read may spend. */
export interface ReadBudgetLimits {
  calls: number;
  bytes: number;
}

/**
 * The budget of every token and asset read: enough for the spec's first 1,000 assets read from the
 * chain (two account scans and twenty batches, about 1.5 MB), not for a wallet of thousands of
 * token accounts.
 */
export const DEFAULT_READ_BUDGET: ReadBudgetLimits = { calls: 30, bytes: 2 * 1024 * 1024 };

/** A read needed more than its budget allows. */
export class ReadBudgetError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReadBudgetError";
  }
}

/** A JSON-RPC endpoint answered with an HTTP error or a JSON-RPC error. */
export class RpcCallError extends Error {
  constructor(message: string, readonly code: number | null = null) {
    super(message);
    this.name = "RpcCallError";
  }
}

/** What one read has spent so far. */
export class ReadBudget {
  #calls = 0;
  #bytes = 0;

  constructor(readonly limits: ReadBudgetLimits = DEFAULT_READ_BUDGET) {}

  /** Counts one RPC call; throws when the read would make more than allowed. */
  spendCall(): void {
    if (++this.#calls > this.limits.calls) {
      throw new ReadBudgetError(
        `The read needs more than ${this.limits.calls} RPC calls; the wallet holds too much to read at once`,
      );
    }
  }

  /** Counts answer bytes; throws when the read would take in more than allowed. */
  spendBytes(bytes: number): void {
    this.#bytes += bytes;
    if (this.#bytes > this.limits.bytes) {
      throw new ReadBudgetError(
        `The read needs more than ${
          this.limits.bytes / 1024 / 1024
        } MB of RPC answers; the wallet holds too much to read at once`,
      );
    }
  }
}

/** Reads a response body as text, spending its bytes as they arrive (cut off past the budget). */
export async function readBudgetedText(response: Response, budget: ReadBudget): Promise<string> {
  if (!response.body) return "";
  const decoder = new TextDecoder();
  let text = "";
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      budget.spendBytes(value.length);
      text += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    await reader.cancel().catch(() => {});
    throw error;
  }
  return text + decoder.decode();
}

/** One JSON-RPC call on `url` within the budget; returns `result` (numbers parsed as numbers). */
export async function callJsonRpc(
  url: string,
  request: { method: string; params: unknown },
  options: { budget: ReadBudget; abortSignal?: AbortSignal },
): Promise<unknown> {
  options.budget.spendCall();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...request }),
    signal: options.abortSignal ?? null,
  });
  if (!response.ok) {
    await response.body?.cancel();
    throw new RpcCallError(`${request.method} answered HTTP ${response.status}`);
  }
  let answer: { result?: unknown; error?: { code?: number; message?: string } };
  try {
    answer = JSON.parse(await readBudgetedText(response, options.budget));
  } catch (error) {
    if (error instanceof ReadBudgetError) throw error;
    throw new RpcCallError(`${request.method} sent an answer that is not JSON`);
  }
  if (answer?.error) {
    const code = typeof answer.error.code === "number" ? answer.error.code : null;
    throw new RpcCallError(`${request.method} failed: ${answer.error.message ?? "error"}`, code);
  }
  return answer?.result;
}

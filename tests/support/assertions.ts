/** Assertion helpers shared by the HTTP tests (every test asserts with `node:assert/strict`). */
import assert from "node:assert/strict";

/** The parsed JSON error answer. */
export interface ErrorAnswer {
  error: { code: string; message: string };
}

/** Asserts the answer is `{ error: { code } }` with `status`, and returns its body. */
export async function assertErrorCode(
  res: Response,
  status: number,
  code: string,
): Promise<ErrorAnswer> {
  const body = await res.json();
  assert.deepEqual({ status: res.status, code: body?.error?.code }, { status, code });
  assert.equal(typeof body.error.message, "string");
  return body;
}

/** Resolves when `condition` holds, polling every 10 ms; rejects naming `what` after `timeoutMs`. */
export async function until(
  condition: () => boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

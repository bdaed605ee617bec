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

/** Assertion helpers shared by the HTTP tests. */
import { assertEquals } from "./assert_reexport.ts";
export { assert, assertEquals, assertNotEquals, assertRejects } from "./assert_reexport.ts";

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
  assertEquals({ status: res.status, code: body?.error?.code }, { status, code });
  assertEquals(typeof body.error.message, "string");
  return body;
}

/** node:assert/strict under the names the tests use. */
import { deepStrictEqual, notDeepStrictEqual, ok, rejects } from "node:assert/strict";

/** Asserts `value` is truthy. */
export const assert: (value: unknown, message?: string) => asserts value = ok;
/** Deep strict equality. */
export const assertEquals: <T>(
  actual: unknown,
  expected: T,
  message?: string,
) => asserts actual is T = deepStrictEqual;
/** Deep strict inequality. */
export const assertNotEquals = notDeepStrictEqual;
/** Asserts the promise rejects. */
export const assertRejects = rejects;

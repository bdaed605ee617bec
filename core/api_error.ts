/** The one error type routes throw: it carries the spec's stable code and HTTP status. */
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** An error answered as `{ error: { code, message } }` with `status`. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** The JSON body of an error answer. */
export function errorBody(
  code: string,
  message: string,
): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

/** The one error type routes throw: it carries the spec's stable code and HTTP status. */

/** The HTTP statuses the spec's errors use. */
type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 422 | 429 | 500 | 502 | 503;

/** An error answered as `{ error: { code, message } }` with `status`. */
export class ApiError extends Error {
  constructor(
    readonly status: ErrorStatus,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * 404 `project_not_found`: the project does not exist, was deleted, or is not the caller's (one
 * answer for all three, so another developer's project ids leak nothing).
 */
export function projectNotFound(message = "Project not found"): ApiError {
  return new ApiError(404, "project_not_found", message);
}

/** The JSON body of an error answer. */
export function errorBody(
  code: string,
  message: string,
): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

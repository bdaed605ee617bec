/** The one error type routes throw: it carries the spec's stable code and its HTTP status. */
import { API_ERRORS, type ApiErrorCode, type ApiErrorStatus } from "./error_codes.ts";

/**
 * An error answered as `{ error: { code, message } }` with the code's status from the catalogue
 * (`core/error_codes.ts`), so a code is thrown with one status everywhere.
 */
export class ApiError extends Error {
  readonly status: ApiErrorStatus;

  constructor(readonly code: ApiErrorCode, message: string) {
    super(message);
    this.name = "ApiError";
    this.status = API_ERRORS[code].status;
  }
}

/**
 * 404 `project_not_found`: the project does not exist, was deleted, or is not the caller's (one
 * answer for all three, so another developer's project ids leak nothing).
 */
export function projectNotFound(message = "Project not found"): ApiError {
  return new ApiError("project_not_found", message);
}

/** The JSON body of an error answer. */
export function errorBody(
  code: ApiErrorCode,
  message: string,
): { error: { code: ApiErrorCode; message: string } } {
  return { error: { code, message } };
}

/**
 * Request body limits, applied app-wide so a new route is bounded without asking: 64 KB under
 * `/dashboard/` (forms with a policy or settings) and for `POST /v1/tx/batch` (50 payouts of up to
 * about 400 bytes each), 16 KB everywhere else (every other JSON body the API takes is far smaller). Hono's `bodyLimit` refuses by `Content-Length` before reading, and counts
 * a body sent without one while it streams in, stopping at the limit; both answer 413
 * `payload_too_large`.
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { ApiError } from "../core/api_error.ts";

// Largest JSON body, in bytes.
const JSON_BODY_LIMIT = 16 * 1024;
// Largest dashboard form body, and batch of payouts, in bytes.
const LARGE_BODY_LIMIT = 64 * 1024;
// The paths whose bodies may be that large.
function takesLargeBody(path: string): boolean {
  return path.startsWith("/dashboard/") || path === "/v1/tx/batch";
}

function limitOf(maxSize: number): MiddlewareHandler {
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new ApiError(
        413,
        "payload_too_large",
        `The request body is larger than ${maxSize / 1024} KB`,
      );
    },
  });
}

/** Middleware bounding every request body by its path's limit. */
export function bodyLimits(): MiddlewareHandler {
  const json = limitOf(JSON_BODY_LIMIT);
  const large = limitOf(LARGE_BODY_LIMIT);
  return function bodyLimits(c, next) {
    // Most requests carry no body; they skip the path test and the limiter's own layer.
    if (c.req.raw.body === null) return next();
    return takesLargeBody(c.req.path) ? large(c, next) : json(c, next);
  };
}

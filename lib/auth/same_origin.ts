/** The same-origin rule of every POST under /auth, /api/link and the dashboard forms. */
import type { Context, MiddlewareHandler } from "hono";
import { ApiError } from "../http/errors.ts";

/** True when the request's `Origin` header is exactly the service's own origin. */
export function isSameOrigin(c: Context, baseUrl: string): boolean {
  const origin = c.req.header("origin");
  return origin !== undefined && origin === new URL(baseUrl).origin;
}

/** Middleware answering 403 `bad_origin` unless `Origin` is the service's origin; put it first. */
export function sameOrigin(options: { baseUrl: string }): MiddlewareHandler {
  const expected = new URL(options.baseUrl).origin;
  return async function sameOrigin(c, next) {
    if (c.req.header("origin") !== expected) {
      // Cookies ride along on cross-site form posts; only the Origin header says who sent it.
      throw new ApiError(403, "bad_origin", "The request did not come from this site");
    }
    await next();
  };
}

/** The same-origin rule of every POST under /auth, /api/link and the dashboard forms. */
import type { MiddlewareHandler } from "hono";
import { ApiError } from "../core/api_error.ts";

/** Middleware answering 403 `bad_origin` unless `Origin` is the service's origin; put it first. */
export function sameOrigin(options: { baseUrl: string }): MiddlewareHandler {
  const expected = new URL(options.baseUrl).origin;
  return async function sameOrigin(c, next) {
    if (c.req.header("origin") !== expected) {
      // Cookies ride along on cross-site form posts; only the Origin header says who sent it.
      throw new ApiError("bad_origin", "The request did not come from this site");
    }
    await next();
  };
}

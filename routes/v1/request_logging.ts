/**
 * Puts every `/v1` call whose key was recognised in the project's request log (`ctx.requestLog`),
 * with its route's template, key, status and error code, refusals included. The event feed's
 * successful reads are left out: a game reads it every few seconds per server, and those answers
 * explain nothing a developer looks for.
 */
import type { MiddlewareHandler } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import type { V1Env } from "./guard.ts";
import { V1_OPERATIONS } from "./operations.ts";

const TEMPLATES = V1_OPERATIONS.map((op) => ({
  method: op.method.toUpperCase(),
  path: op.path,
  pattern: new RegExp(`^${op.path.replace(/\{[^}]+\}/g, "[^/]+")}$`),
  literal: !op.path.includes("{"),
}));

/** The route template a call matched; fixed paths win over parameters (`/v1/tx/batch`). */
function routeOf(method: string, path: string): string {
  const matches = TEMPLATES.filter((t) => t.method === method && t.pattern.test(path));
  return (matches.find((t) => t.literal) ?? matches[0])?.path ?? path;
}

/** The middleware, in front of every `/v1` route. */
export function requestLogging(ctx: AppContext): MiddlewareHandler<V1Env> {
  return async function requestLogging(c, next) {
    const started = performance.now();
    const at = ctx.clock.now();
    try {
      await next();
    } finally {
      const project = c.get("project");
      const keyId = c.get("keyId");
      const route = routeOf(c.req.method, c.req.path);
      const status = c.res.status;
      if (project && keyId && !(route === "/v1/events" && status < 400)) {
        const error = c.error;
        ctx.requestLog.add(project.id, {
          at,
          method: c.req.method,
          route,
          keyId,
          status,
          code: error instanceof ApiError ? error.code : status >= 500 ? "internal" : null,
          ms: Math.round(performance.now() - started),
        });
      }
    }
  };
}

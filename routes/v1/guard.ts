import type { MiddlewareHandler } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import type { Project } from "../../kv/projects.ts";

/** Hono environment of `/v1` routes: the key's project is known. */
export type V1Env = { Variables: { project: Project; keyId: string } };

/** Checks the API key, then counts the request against the project's quotas: steps 1 and 2 of every `/v1` route. */
export function apiGuard(ctx: AppContext): MiddlewareHandler<V1Env> {
  return async function apiGuard(c, next) {
    const resolved = await ctx.apiKeys.resolve(c.req.header("x-api-key"));
    if (!resolved) throw new ApiError(401, "unauthorized", "Missing or invalid API key");
    const verdict = await ctx.quota.count(resolved.project.id);
    if (verdict === "daily_quota_exceeded") {
      throw new ApiError(
        429,
        "daily_quota_exceeded",
        "The project used its requests for today (UTC)",
      );
    }
    if (verdict === "rate_limited") {
      throw new ApiError(429, "rate_limited", "Too many requests this minute for the project");
    }
    c.set("project", resolved.project);
    c.set("keyId", resolved.keyId);
    await next();
  };
}

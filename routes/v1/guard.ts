import type { MiddlewareHandler } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import type { Project } from "../../kv/projects.ts";
import { FEED_READS_PER_SECOND } from "../../lib/quota/feed_reads.ts";
import type { ApiKeyScope } from "../../kv/api_keys.ts";

/** Hono environment of `/v1` routes: the key's project is known. */
export type V1Env = { Variables: { project: Project; keyId: string } };

/**
 * Checks the API key, then counts the request against the project's quotas (steps 1 and 2 of
 * every `/v1` route), then that the key has the route's `scope` (403 `insufficient_scope`). With
 * `limit: "feed_reads"` (the event feed) the request is not counted toward the quotas but against
 * the feed's own limit (`lib/quota/feed_reads.ts`).
 *
 * The scope comes after the quota so that every request with a valid key is counted, whatever its
 * answer (spec "Any /v1 route"): a key without the scope cannot call the route more often than
 * one with it. And it comes before the body is read, so a key without `pay` learns nothing of a
 * transaction route's body rules, let alone of the project's wallet or policy.
 */
export function apiGuard(
  ctx: AppContext,
  options: { scope: ApiKeyScope; limit?: "quotas" | "feed_reads" },
): MiddlewareHandler<V1Env> {
  return async function apiGuard(c, next) {
    const resolved = await ctx.apiKeys.resolve(c.req.header("x-api-key"));
    if (!resolved) throw new ApiError(401, "unauthorized", "Missing or invalid API key");
    if (options.limit === "feed_reads") {
      if (!ctx.feedReads.take(resolved.project.id)) {
        throw new ApiError(
          429,
          "feed_rate_limited",
          `More than ${FEED_READS_PER_SECOND} feed reads this second for the project`,
        );
      }
    } else {
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
    }
    if (!resolved.scopes.includes(options.scope)) {
      throw new ApiError(
        403,
        "insufficient_scope",
        `This API key does not have the ${options.scope} scope: create a key with it in the dashboard`,
      );
    }
    c.set("project", resolved.project);
    c.set("keyId", resolved.keyId);
    await next();
  };
}

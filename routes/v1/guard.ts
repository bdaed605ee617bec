import type { MiddlewareHandler } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import type { Project } from "../../kv/projects.ts";
import { FEED_READS_PER_SECOND } from "../../core/feed_limits.ts";
import type { ApiKeyScope } from "../../kv/api_keys.ts";
import type { QuotaVerdict } from "../../lib/quota/quota_plan.ts";
import { Admission } from "../../lib/quota/admission.ts";

/**
 * Hono environment of `/v1` routes: the key's project is known, and `admission.verdict()`
 * resolves once the request passed its quota (rejects with the quota's 429 otherwise).
 */
export type V1Env = {
  Variables: { project: Project; keyId: string; admission: Admission };
};

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
 *
 * `quotaVerdict: "awaited_by_route"` (the transaction routes): the route goes on while the
 * request is counted (a quiet project's count is a commit, which a payout may make its own
 * reservation's, `lib/quota/admission.ts`), and waits for the verdict (`afterAdmission`) before
 * its first write and before any answer, so the order of checks and "counted before its answer"
 * hold as if it had waited here.
 */
export function apiGuard(
  ctx: AppContext,
  options: {
    scope: ApiKeyScope;
    limit?: "quotas" | "feed_reads";
    quotaVerdict?: "awaited_by_route";
  },
): MiddlewareHandler<V1Env> {
  return async function apiGuard(c, next) {
    const resolved = await ctx.apiKeys.resolve(c.req.header("x-api-key"));
    if (!resolved) throw new ApiError("unauthorized", "Missing or invalid API key");
    const projectId = resolved.project.id;
    // Known from here on, for the request log (`request_logging.ts`), refusals included.
    c.set("project", resolved.project);
    c.set("keyId", resolved.keyId);
    let admission: Admission;
    if (options.limit === "feed_reads") {
      if (!ctx.feedReads.take(projectId)) {
        throw new ApiError(
          "feed_rate_limited",
          `More than ${FEED_READS_PER_SECOND} feed reads this second for the project`,
        );
      }
      admission = new Admission(() => Promise.resolve("ok"), refuseOverQuota);
    } else {
      const byRoute = options.quotaVerdict === "awaited_by_route";
      admission = new Admission(
        () => ctx.quota.count(projectId),
        refuseOverQuota,
        byRoute ? ctx.quota.foldable(projectId) : null,
      );
      if (!byRoute) await admission.verdict();
    }
    if (!resolved.scopes.includes(options.scope)) {
      await admission.verdict();
      throw new ApiError(
        "insufficient_scope",
        `This API key does not have the ${options.scope} scope: create a key with it in the dashboard`,
      );
    }
    c.set("admission", admission);
    await next();
  };
}

/** Step 2's answer: nothing within both quotas, else the 429 of the one passed. */
function refuseOverQuota(verdict: QuotaVerdict): void {
  if (verdict === "daily_quota_exceeded") {
    throw new ApiError("daily_quota_exceeded", "The project used its requests for today (UTC)");
  }
  if (verdict === "rate_limited") {
    throw new ApiError("rate_limited", "Too many requests this minute for the project");
  }
}

/**
 * Runs a route's work, given its `admission`, while its request is counted (`quotaVerdict:
 * "awaited_by_route"`): whatever it answers, result or error, waits for the quota's verdict (which
 * counts the request now if its work did not), and a refusal answers instead (step 2 comes before
 * every later step). The work itself settles step 2 before its first write.
 */
export async function afterAdmission<T>(
  admission: Admission,
  work: (admission: Admission) => Promise<T>,
): Promise<T> {
  let result: T;
  try {
    result = await work(admission);
  } catch (error) {
    await admission.verdict();
    throw error;
  }
  await admission.verdict();
  return result;
}

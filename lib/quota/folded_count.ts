/**
 * A quiet project's request counted by the commit of the route's first write (a payout's
 * reservation) instead of a quota round of its own (`request_quota.ts`), as the places of its
 * limits are (`lib/tx/allowance_fold.ts`).
 *
 * Exactness: the commit does what a round counting this one request and leasing nothing does
 * (`planProject`), checked on the counters it read; a concurrent count on any instance changes
 * them and one of the two commits reads again. A request the counters would refuse, or defer for
 * other instances' leases, is not folded: it is counted alone, and answered by that count first
 * (step 2), and nothing is written. A request whose route writes nothing (refused by a later step,
 * or answered from its key) is counted alone before its answer (`Admission`).
 */
import { ulid } from "../../core/ids.ts";
import { type RequestCounts, requestCountsKey } from "../../kv/request_counts.ts";
import { addRequestUsage } from "../../kv/usage.ts";
import { planProject } from "./quota_plan.ts";

/** A request counted by the commit it is added to. */
export interface FoldedCount {
  /** Adds the counters' check and writes, and the usage counters', to the commit. */
  addTo(op: Deno.AtomicOperation): void;
}

/**
 * The request's count from the project's counters read as `entry` at `now`, or null when the
 * counters do not let it through at once (over a quota, or deferred for other instances' leases).
 */
export function foldCount(
  projectId: string,
  entry: Deno.KvEntryMaybe<RequestCounts>,
  now: number,
): FoldedCount | null {
  const plan = planProject(entry.value, { waiting: 1, prefetch: 0 }, now);
  if (plan.verdicts[0] !== "ok") return null;
  const key = requestCountsKey(projectId);
  const next: RequestCounts = { ...plan.next, round: ulid(now) };
  return {
    addTo: (op) => {
      op.check(entry).set(key, next);
      for (const { minute, n } of plan.used) {
        addRequestUsage(op, projectId, { at: minute * 60_000, count: n });
      }
    },
  };
}

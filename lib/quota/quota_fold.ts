/**
 * A quiet project's request counted by a commit of the route's own (a payout's reservation), so it
 * waits for no quota round before it: what a round would write for it alone (`planProject`), checked
 * on the counters as that commit read them, so a round or another fold in between fails it. It
 * folds only when the request is admitted at once; a refusal, or a wait for other instances'
 * leases, is a round's to decide. A commit that does not apply counted nothing.
 */
import { type RequestCounts, requestCountsKey } from "../../kv/request_counts.ts";
import { addRequestUsage } from "../../kv/usage.ts";
import { planProject } from "./quota_plan.ts";

/** One request's count, offered to a commit (`RequestQuota.foldable`). */
export interface QuotaFold {
  /** The counters the commit reads and checks. */
  key: Deno.KvKey;
  /**
   * Adds to `op` the request counted at `now` on the counters as read (`entry`), checked; false,
   * adding nothing, unless it is admitted at once.
   */
  add(op: Deno.AtomicOperation, entry: Deno.KvEntryMaybe<unknown>, now: number): boolean;
  /** The commit applied with the count, at `versionstamp`. */
  committed(versionstamp: string): void;
  /** Nothing was counted. */
  release(): void;
}

/** The fold of one request of `projectId`; `settled` hears its outcome (the counters written, or none). */
export function quotaFold(
  projectId: string,
  settled: (written: Deno.KvEntry<RequestCounts> | null) => void,
): QuotaFold {
  const key = requestCountsKey(projectId);
  let next: RequestCounts | null = null;
  return {
    key,
    add(op, entry, now) {
      const plan = planProject(
        entry.value as RequestCounts | null,
        { waiting: 1, prefetch: 0 },
        now,
      );
      if (plan.verdicts[0] !== "ok") return false;
      next = plan.next;
      op.check(entry).set(key, next);
      for (const { minute, n } of plan.used) {
        addRequestUsage(op, projectId, { at: minute * 60_000, count: n });
      }
      return true;
    },
    committed: (versionstamp) => settled({ key, value: next!, versionstamp }),
    release: () => settled(null),
  };
}

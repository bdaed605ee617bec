/**
 * Per-project request counters for the minute and UTC-day quotas.
 *
 * A commit that counts a project checks its counters' entry; the counters carry the id of the round
 * that wrote them, so a round whose answer was lost on the network can tell whether it applied.
 *
 * These counters also hold allowance leased to instances and not used yet, so usage pages read the
 * usage rings of `usage.ts` instead, written in the same round with what was actually used.
 */

/** A project's counters; a window that has passed counts as zero. */
export interface RequestCounts {
  /** Clock minute (minutes since the epoch) that `minuteCount` belongs to. */
  minute: number;
  minuteCount: number;
  /** UTC day (days since the epoch) that `dayCount` belongs to. */
  day: number;
  dayCount: number;
  /** Allowance of `minute` leased to instances and not settled yet (included in both counts). */
  leased?: number;
  /** When the last of those leases ends (epoch ms); past it plus a grace, holders count as gone. */
  leasedUntil?: number;
  /** Id of the quota round that wrote these counters. */
  round?: string;
}

/** Key of a project's request counters. */
export function requestCountsKey(projectId: string): Deno.KvKey {
  return ["request_counts", projectId];
}

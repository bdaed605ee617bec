/**
 * Per-project request counters for the minute and UTC-day quotas.
 *
 * Counters are guarded by shard: every write of a project's counters also bumps its shard's
 * version key, in the same commit. A commit that checks a shard's version therefore knows no
 * counter of that shard changed since, so one commit can count many projects with a few checks.
 * The version's value is the id of the round that wrote it last, so a round whose answer was lost on
 * the network can tell whether it applied.
 *
 * The usage counters (`request_minutes`, `request_days`) hold what was actually used:
 * requests answered plus the used part of each settled lease, added with `sum`. They are the cheap
 * read for usage pages; the quota counters also hold allowance leased and not used yet.
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
}

/** How many shards the counters are spread over; at most ten, the checks one commit may make. */
export const REQUEST_COUNT_SHARDS = 8;

/** Key of a project's request counters. */
export function requestCountsKey(projectId: string): Deno.KvKey {
  return ["request_counts", projectId];
}

/** Key of a shard's version: bumped by every counter write in the shard. */
export function requestShardKey(shard: number): Deno.KvKey {
  return ["request_count_shards", shard];
}

/** Key of the requests a project used in one clock minute (minutes since the epoch); a `Deno.KvU64`. */
export function requestUsageMinuteKey(projectId: string, minute: number): Deno.KvKey {
  return ["request_minutes", projectId, minute];
}

/** Key of the requests a project used in one UTC day (days since the epoch); a `Deno.KvU64`. */
export function requestUsageDayKey(projectId: string, day: number): Deno.KvKey {
  return ["request_days", projectId, day];
}

/** The shard a project's counters belong to (FNV-1a of its id). */
export function requestShardOf(projectId: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < projectId.length; i++) {
    hash ^= projectId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % REQUEST_COUNT_SHARDS;
}

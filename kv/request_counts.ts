/** Per-project request counters for the minute and UTC-day quotas, in one record so one check guards both. */

/** A project's counters; a window that has passed counts as zero. */
export interface RequestCounts {
  /** Clock minute (minutes since the epoch) that `minuteCount` belongs to. */
  minute: number;
  minuteCount: number;
  /** UTC day (days since the epoch) that `dayCount` belongs to. */
  day: number;
  dayCount: number;
}

/** Key of a project's request counters. */
export function requestCountsKey(projectId: string): Deno.KvKey {
  return ["request_counts", projectId];
}

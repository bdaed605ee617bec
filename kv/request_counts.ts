/** Per-project request counters for the minute and UTC-day quotas. */

/** Key of a project's request count in one clock minute (minutes since the epoch). */
export function minuteCountKey(projectId: string, minute: number): Deno.KvKey {
  return ["request_counts_minute", projectId, minute];
}
/** Key of a project's request count in one UTC day (days since the epoch). */
export function dayCountKey(projectId: string, day: number): Deno.KvKey {
  return ["request_counts_day", projectId, day];
}

/** How long counters outlive their window: long enough that a late read never sees a reset. */
export const MINUTE_COUNT_TTL_MS = 2 * 60_000;
/** See `MINUTE_COUNT_TTL_MS`. */
export const DAY_COUNT_TTL_MS = 2 * 86_400_000;

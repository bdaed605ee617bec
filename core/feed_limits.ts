/**
 * The event feed's per-instance limits (enforced by `lib/quota/feed_reads.ts`), here at the bottom
 * because the error catalogue states them in `feed_rate_limited`.
 */

/** Feed reads one project may make per second on one instance. */
export const FEED_READS_PER_SECOND = 200;
/**
 * Events one project's feed reads may decode from the store per second on one instance (and at
 * most at once: the bucket holds one second's worth).
 */
export const FEED_STORE_EVENTS_PER_SECOND = 10_000;

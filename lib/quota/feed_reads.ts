/**
 * The event feed's own limit. Feed reads (`GET /v1/events`) are not counted toward the request
 * quotas: every server of a game reads the feed in the background, and a game of 1,000 servers
 * doing so would otherwise spend the project's 600 requests a minute on staying in sync alone
 * (the SDK's README has the arithmetic). What a feed read costs is this instance's time: a read
 * with nothing new answers from memory (`lib/events/feed_heads.ts`), so the cap is counted in this
 * instance's memory too, per project and second, with no store write.
 */
import type { Clock } from "../../core/clock.ts";

/** Feed reads one project may make per second on one instance. */
export const FEED_READS_PER_SECOND = 200;
/** Projects counted at once; past it, the counter used longest ago is dropped. */
export const MAX_FEED_READ_PROJECTS = 10_000;

/** Counts feed reads per project and clock second on this instance. */
export class FeedReadLimit {
  #counts = new Map<string, { second: number; count: number }>();

  constructor(private clock: Clock) {}

  /** Counts one feed read of the project; false when it already made its reads this second. */
  take(projectId: string): boolean {
    const second = Math.floor(this.clock.now() / 1_000);
    const counter = this.#counts.get(projectId);
    if (counter && counter.second === second) {
      if (counter.count >= FEED_READS_PER_SECOND) return false;
      counter.count++;
      return true;
    }
    // The map keeps counters in the order they were last started, so the first is the stalest.
    // Dropping it when full (a flood of projects within one second) only lets that project start
    // its count again; refusing everyone instead would stop every game's feed.
    this.#counts.delete(projectId);
    if (this.#counts.size >= MAX_FEED_READ_PROJECTS) {
      const stalest = this.#counts.keys().next();
      if (!stalest.done) this.#counts.delete(stalest.value);
    }
    this.#counts.set(projectId, { second, count: 1 });
    return true;
  }
}

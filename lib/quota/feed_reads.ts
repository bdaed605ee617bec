/**
 * The event feed's own limits. Feed reads (`GET /v1/events`) are not counted toward the request
 * quotas: every server of a game reads the feed in the background, and a game of 1,000 servers
 * doing so would otherwise spend the project's 600 requests a minute on staying in sync alone
 * (the SDK's README has the arithmetic). What a feed read costs is this instance's time, so both
 * limits are counted in this instance's memory, per project, with no store write:
 *
 * | Limit (method)                   | Counts                      | Per project and instance |
 * | -------------------------------- | --------------------------- | ------------------------ |
 * | reads (`take`)                   | every read with a valid key | 200 a clock second       |
 * | store events (`takeStoreEvents`) | events decoded from store   | 10,000 a second (bucket) |
 *
 * A read with nothing new answers from memory (`lib/events/feed_heads.ts`) and costs next to
 * nothing; a read behind the end (an old cursor, a `types` filter matching little) decodes up to
 * 1,000 events, about a millisecond of CPU. So the second limit is a token bucket of events: a
 * read takes what it may decode before it touches the store (at most what is left; none left is
 * `feed_rate_limited`) and gives back what it did not use. A read given less than it asked for
 * stops early with a `next` to continue from, so an honest reader catching up still moves on.
 */
import type { Clock } from "../../core/clock.ts";
import { FEED_READS_PER_SECOND, FEED_STORE_EVENTS_PER_SECOND } from "../../core/feed_limits.ts";

/** Projects counted at once; past it, the counter used longest ago is dropped. */
export const MAX_FEED_READ_PROJECTS = 10_000;

interface Counter {
  second: number;
  count: number;
  /** Store events left in the bucket as of `filledAt` (below zero after a read that overran). */
  events: number;
  filledAt: number;
}

/** Counts feed reads and the store events they decode, per project, on this instance. */
export class FeedReadLimit {
  #counts = new Map<string, Counter>();

  constructor(private clock: Clock) {}

  /** Counts one feed read of the project; false when it already made its reads this second. */
  take(projectId: string): boolean {
    const now = this.clock.now();
    const second = Math.floor(now / 1_000);
    const counter = this.#counter(projectId, now);
    if (counter.second !== second) {
      counter.second = second;
      counter.count = 0;
    }
    if (counter.count >= FEED_READS_PER_SECOND) return false;
    counter.count++;
    return true;
  }

  /** Takes up to `wanted` store events from the project's bucket; answers how many (0: none). */
  takeStoreEvents(projectId: string, wanted: number): number {
    const now = this.clock.now();
    const counter = this.#counter(projectId, now);
    const refill = (now - counter.filledAt) * FEED_STORE_EVENTS_PER_SECOND / 1_000;
    counter.events = Math.min(FEED_STORE_EVENTS_PER_SECOND, counter.events + refill);
    counter.filledAt = now;
    const taken = Math.max(0, Math.min(wanted, Math.floor(counter.events)));
    counter.events -= taken;
    return taken;
  }

  /**
   * Settles a read that took `taken` store events and decoded `used`: gives back what it did not
   * use, or takes what it used past them (a read decodes whole feed entries, so it may overrun by
   * part of one).
   */
  settleStoreEvents(projectId: string, input: { taken: number; used: number }): void {
    const counter = this.#counts.get(projectId);
    if (counter) counter.events += input.taken - input.used;
  }

  // The project's counter, made when missing. The map keeps counters in the order they were last
  // used, so the first is the stalest. Dropping it when full (a flood of projects within one
  // second) only lets that project start its counts again; refusing everyone instead would stop
  // every game's feed.
  #counter(projectId: string, now: number): Counter {
    let counter = this.#counts.get(projectId);
    this.#counts.delete(projectId);
    if (!counter) {
      if (this.#counts.size >= MAX_FEED_READ_PROJECTS) {
        const stalest = this.#counts.keys().next();
        if (!stalest.done) this.#counts.delete(stalest.value);
      }
      counter = { second: -1, count: 0, events: FEED_STORE_EVENTS_PER_SECOND, filledAt: now };
    }
    this.#counts.set(projectId, counter);
    return counter;
  }
}

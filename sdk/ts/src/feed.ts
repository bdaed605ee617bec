/**
 * Following the event feed (`GET /v1/events`) with the Luau SDK's cursor semantics
 * (`Feed.luau`; `sdk/README.md` states them for every client):
 *
 * - The cursor is the id of the last event handed over; pass it back as `after` and each event
 *   comes once, in order. It moves past an event only once the loop asked for the next one, so a
 *   cursor saved after handling an event (`cursor()`) never skips one: at least once, in order.
 * - Without a saved cursor the first read is `after=latest&recent=<seconds since the reader
 *   started, plus 3>`: every event recorded since the start, not the whole history.
 * - A full page (or, with `types`, a `next` that moved) is followed by the next read at once;
 *   otherwise the feed is read every `intervalMs`, give or take a quarter, at random.
 * - A cursor the service refuses (another project's, or a reset store's) is dropped with a warning
 *   and reading goes on from the start; `unauthorized` (a revoked key) and a service without a
 *   feed end the loop with an error. Other failures are warned about and retried next time.
 * - Feed reads are not counted toward the quotas; were they (an older service), a quota answer
 *   holds the reader as the client rules say.
 */
import type { EventType, FeedEvent, Result } from "./result.ts";
import { sleep } from "./sleep.ts";

/** Options of `Blocklink.events()`. */
export interface EventReaderOptions<T extends EventType> {
  /** A cursor saved from `cursor()`, to read on from. */
  after?: string;
  /** Only these types. */
  types?: readonly T[];
  /** Events per read (1 to 500; default 100). */
  limit?: number;
  /** Time between reads when nothing is pending, in ms (default 2,000). */
  intervalMs?: number;
  /** Ends the loop. */
  signal?: AbortSignal;
  /** Told about failures the reader recovers from (default: `console.warn`). */
  onWarning?: (message: string) => void;
}

/** What the reader needs of the client. */
export interface FeedSource {
  read(
    query: {
      after?: string;
      recent?: number;
      limit?: number;
      types?: EventType[];
    },
    signal?: AbortSignal,
  ): Promise<Result<"listEvents">>;
  heldUntil(): number;
}

/** Seconds added to the first read's look back, for the request's own time. */
const LOOK_BACK_SECONDS = 3;
/** The service's longest look back (`recent`). */
const MAX_RECENT_SECONDS = 3_600;

/** An endless, in-order stream of the feed's events: `for await (const event of reader)`. */
export class EventReader<T extends EventType = EventType>
  implements AsyncIterable<Extract<FeedEvent, { type: T }>> {
  readonly #source: FeedSource;
  readonly #options: EventReaderOptions<T>;
  #cursor: string | null;

  constructor(source: FeedSource, options: EventReaderOptions<T>) {
    this.#source = source;
    this.#options = options;
    this.#cursor = options.after ?? null;
  }

  /** The id of the last event handed over (or the feed position read to): save it as `after`. */
  cursor(): string | null {
    return this.#cursor;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<
    Extract<FeedEvent, { type: T }>
  > {
    const { signal, types } = this.#options;
    const limit = this.#options.limit ?? 100;
    const warn = this.#options.onWarning ??
      ((message: string) => console.warn(message));
    const startedAt = Date.now();
    while (!signal?.aborted) {
      const from = this.#cursor;
      const query = {
        ...(from === null ? { after: "latest", recent: recentSince(startedAt) } : { after: from }),
        limit,
        ...(types ? { types: [...types] } : {}),
      };
      let page: Result<"listEvents">;
      try {
        page = await this.#source.read(query, signal);
      } catch (error) {
        if (signal?.aborted) return;
        throw error;
      }
      let again = false;
      if (page.ok) {
        for (const event of page.data.events) {
          yield event as Extract<FeedEvent, { type: T }>;
          this.#cursor = event.id;
        }
        this.#cursor = page.data.next;
        again = page.data.events.length >= limit ||
          (types !== undefined && page.data.next !== from);
      } else if (
        page.code === "unauthorized" || (page.code as string) === "not_found"
      ) {
        // A revoked key, or a service from before the feed: waiting changes nothing.
        throw new Error(
          `The event feed cannot be read: ${page.code}: ${page.message}`,
        );
      } else if (page.code === "invalid_request" && from !== null) {
        warn(
          `The feed refused cursor ${from} (${page.message}); reading on from the start`,
        );
        this.#cursor = null;
        again = true;
      } else if (page.code === "invalid_request") {
        throw new Error(
          `This service cannot start a feed reader (${page.message}): update it`,
        );
      } else {
        warn(
          `Reading the event feed failed (${page.code}: ${page.message}); trying again`,
        );
      }
      const interval = (this.#options.intervalMs ?? 2_000) *
        (0.75 + Math.random() * 0.5);
      const wait = again ? 0 : interval;
      try {
        await sleep(
          Math.max(wait, this.#source.heldUntil() - Date.now()),
          signal,
        );
      } catch {
        return;
      }
    }
  }
}

function recentSince(startedAt: number): number {
  const seconds = Math.ceil((Date.now() - startedAt) / 1000) +
    LOOK_BACK_SECONDS;
  return Math.min(seconds, MAX_RECENT_SECONDS);
}

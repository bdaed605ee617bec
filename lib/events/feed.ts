/**
 * Reading a project's event feed from a cursor (`GET /v1/events`).
 *
 * The cursor is the position of the last event examined, as a decimal string; event ids are
 * positions too, so an event's id is also a valid cursor ("everything after this event"). Since
 * positions are committed strictly in order (`kv/event_feed.ts`), a reader that passes `next` back
 * sees every event once: nothing can appear later behind a cursor it was given.
 */
import { FEED_CHUNK_SIZE, findRecentFeedCursor, listFeedEvents } from "../../kv/event_feed.ts";
import type { EventContext } from "./runtime.ts";
import { ApiError } from "../../core/api_error.ts";
import { feedEntryOf, type ServiceEventType } from "../../core/events.ts";
import { FEED_STORE_EVENTS_PER_SECOND } from "../../core/feed_limits.ts";

/** The `after` value that asks for the end of the feed instead of events. */
export const LATEST = "latest";

/** Longest look back of `recent`, in seconds. */
export const MAX_RECENT_SECONDS = 3_600;

/**
 * Most events one answer decodes from the store (so examines when filtering by type, `next`
 * moving past them all), and most events `recent` looks back over.
 */
const FEED_MAX_DECODED = 1_000;

/** One answer of the feed route. */
interface FeedAnswer {
  /** `{ id, type, createdAt, ...payload }`, oldest first; null payload fields are kept as null. */
  events: Array<Record<string, unknown>>;
  next: string;
}

/**
 * Reads up to `limit` events after the cursor `after` (from the oldest kept event without one),
 * only of `types` when given. `after: "latest"` starts at the end of the feed, where a new reader
 * starts: no events and the end as `next`, or with `recent`, the events recorded in the last
 * `recent` seconds (a server started a few seconds ago catches what happened meanwhile). Throws
 * 400 `invalid_request` for a cursor past the end of the feed (one of another project, or of a
 * store that was reset), which would otherwise skip events. A cursor at the end as this instance
 * knows it answers without a store read (`feed_heads.ts`); a read of the store takes the events it
 * may decode from the project's budget first (`lib/quota/feed_reads.ts`): fewer than it would
 * like is a shorter answer, none is 429 `feed_rate_limited`.
 */
export async function readFeed(
  ctx: EventContext,
  projectId: string,
  query: {
    after?: string | undefined;
    recent?: number | undefined;
    limit: number;
    types?: readonly ServiceEventType[] | undefined;
  },
): Promise<FeedAnswer> {
  let head = await ctx.events.heads.get(projectId);
  let after: number;
  if (query.after === LATEST) {
    if (!query.recent) return { events: [], next: String(head) };
    const since = ctx.clock.now() - query.recent * 1_000;
    after = await withStoreBudget(ctx, projectId, FEED_MAX_DECODED, async (maxDecoded) => {
      const found = await findRecentFeedCursor(ctx.kv, projectId, { since, maxDecoded });
      return { decoded: found.decoded, result: found.cursor };
    });
  } else {
    after = query.after === undefined ? 0 : Number(query.after);
  }
  // Another instance may have recorded more than this one knows yet: ask the store before refusing.
  if (after > head) head = await ctx.events.heads.read(projectId);
  if (after > head) {
    throw new ApiError("invalid_request", "after: is past the end of this project's feed");
  }
  if (after === head) return { events: [], next: String(after) };
  const types = query.types ? new Set(query.types) : null;
  // Without a filter, `limit` events after the cursor lie within the entries holding them (and
  // the part of the first one before the cursor): ask no more of the budget than that.
  const wanted = types
    ? FEED_MAX_DECODED
    : Math.min(query.limit + 2 * FEED_CHUNK_SIZE, FEED_MAX_DECODED);
  return await withStoreBudget(ctx, projectId, wanted, async (maxDecoded) => {
    const page = await listFeedEvents(ctx.kv, projectId, {
      after,
      limit: query.limit,
      types,
      now: ctx.clock.now(),
      maxDecoded,
    });
    const result = { events: page.events.map(feedEntryOf), next: String(page.next) };
    return { decoded: page.decoded, result };
  });
}

/**
 * Runs a read of the store with the events it may decode (up to `wanted`) taken from the project's
 * budget on this instance, and gives back what it did not decode.
 */
async function withStoreBudget<T>(
  ctx: EventContext,
  projectId: string,
  wanted: number,
  read: (maxDecoded: number) => Promise<{ decoded: number; result: T }>,
): Promise<T> {
  const taken = ctx.feedReads.takeStoreEvents(projectId, wanted);
  if (taken === 0) {
    throw new ApiError(
      "feed_rate_limited",
      `The project's feed reads behind its end decoded their ${FEED_STORE_EVENTS_PER_SECOND} ` +
        "stored events of this second on this instance: read on from your cursor shortly",
    );
  }
  let decoded = taken;
  try {
    const done = await read(taken);
    decoded = done.decoded;
    return done.result;
  } finally {
    ctx.feedReads.settleStoreEvents(projectId, { taken, used: decoded });
  }
}

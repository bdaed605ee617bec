/**
 * Reading a project's event feed from a cursor (`GET /v1/events`).
 *
 * The cursor is the position of the last event examined, as a decimal string; event ids are
 * positions too, so an event's id is also a valid cursor ("everything after this event"). Since
 * positions are committed strictly in order (`kv/event_feed.ts`), a reader that passes `next` back
 * sees every event once: nothing can appear later behind a cursor it was given.
 */
import { findRecentFeedCursor, listFeedEvents } from "../../kv/event_feed.ts";
import type { EventContext } from "./runtime.ts";
import { ApiError } from "../../core/api_error.ts";
import { feedEntryOf, type ServiceEventType } from "../../core/events.ts";

/** The `after` value that asks for the end of the feed instead of events. */
export const LATEST = "latest";

/** Longest look back of `recent`, in seconds. */
export const MAX_RECENT_SECONDS = 3_600;

/**
 * Most events one answer examines when filtering by type (`next` moves past them all), and most
 * events `recent` looks back over.
 */
const FEED_MAX_EXAMINED = 1_000;

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
 * knows it answers without a store read (`feed_heads.ts`).
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
    after = await findRecentFeedCursor(ctx.kv, projectId, {
      since: ctx.clock.now() - query.recent * 1_000,
      maxExamined: FEED_MAX_EXAMINED,
    });
  } else {
    after = query.after === undefined ? 0 : Number(query.after);
  }
  // Another instance may have recorded more than this one knows yet: ask the store before refusing.
  if (after > head) head = await ctx.events.heads.read(projectId);
  if (after > head) {
    throw new ApiError(400, "invalid_request", "after: is past the end of this project's feed");
  }
  if (after === head) return { events: [], next: String(after) };
  const page = await listFeedEvents(ctx.kv, projectId, {
    after,
    limit: query.limit,
    types: query.types ? new Set(query.types) : null,
    now: ctx.clock.now(),
    maxExamined: FEED_MAX_EXAMINED,
  });
  return { events: page.events.map(feedEntryOf), next: String(page.next) };
}

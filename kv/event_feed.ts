/**
 * The per-project event feed: every event a project produces, in the order it was committed, kept
 * 7 days, read from a cursor by game servers (`GET /v1/events`).
 *
 * Why a counter and not time-ordered keys: a reader that has passed position N must never later
 * find an event at a position below N, or it misses it. With ULID or clock keys, an id taken before
 * a slow commit lands behind a cursor that a faster commit already moved past. So ids come from
 * one counter per project, `["event_seqs", projectId]`, and every commit that records events reads
 * it, checks it and moves it forward in the same atomic commit as the change the events report (a
 * link, a settled transaction, a watch poll). Two commits that read the same counter value cannot
 * both succeed, so the commit writing events N+1.. always comes after the one writing N: the feed
 * only ever grows at its end, and every prefix a reader sees is complete. The price is that a
 * project's event-writing commits are serialized: one check per commit, and a retry with a fresh
 * read when another commit got in between (`lib/events/record.ts` queues them per project within
 * a process, so only other instances race; `docs/performance.md` has the numbers).
 *
 * Events of one commit share one entry (a chunk of at most 50, keyed by its first position), so a
 * poll that finds 1,000 transactions writes 20 entries, within KV's commit limits.
 */
import type { RecordedEvent, ServiceEvent, ServiceEventType } from "../core/events.ts";

/** How long events stay in the feed. */
const FEED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** Most events stored in one feed entry. */
const FEED_CHUNK_SIZE = 50;

/** One feed entry: consecutive events recorded by one commit. */
interface FeedChunk {
  createdAt: number;
  /** `createdAt` + 7 days; re-checked on read (`expireIn` is only the earliest deletion). */
  expiresAt: number;
  events: ServiceEvent[];
}

/** Key of a project's feed counter (value: the last position taken, a number). */
export function eventSeqKey(projectId: string): Deno.KvKey {
  return ["event_seqs", projectId];
}
/** Key of the feed entry whose first event is at `first`. */
function feedChunkKey(projectId: string, first: number): Deno.KvKey {
  return ["events", projectId, first];
}

/** Reads the feed counter, to be checked by the commit that records events. */
export function getEventSeqEntry(
  kv: Deno.Kv,
  projectId: string,
): Promise<Deno.KvEntryMaybe<number>> {
  return kv.get<number>(eventSeqKey(projectId));
}

/**
 * Adds `events` to `op` at the positions after `seq` (one check on the counter, which fails the
 * commit if another commit recorded events since `seq` was read); returns them with their ids.
 * Call once per operation, with a counter entry read for that operation.
 */
export function addFeedEvents(
  op: Deno.AtomicOperation,
  projectId: string,
  input: { seq: Deno.KvEntryMaybe<number>; events: readonly ServiceEvent[]; now: number },
): RecordedEvent[] {
  const { seq, events, now } = input;
  const last = seq.value ?? 0;
  op.check(seq).set(eventSeqKey(projectId), last + events.length);
  for (let i = 0; i < events.length; i += FEED_CHUNK_SIZE) {
    const chunk: FeedChunk = {
      createdAt: now,
      expiresAt: now + FEED_RETENTION_MS,
      events: events.slice(i, i + FEED_CHUNK_SIZE),
    };
    op.set(feedChunkKey(projectId, last + 1 + i), chunk, { expireIn: FEED_RETENTION_MS });
  }
  return events.map((event, i) => ({ ...event, id: String(last + 1 + i), createdAt: now }));
}

/** One page of the feed. */
interface FeedPage {
  events: RecordedEvent[];
  /** Position of the last event examined (or `after` when none was): the next `after`. */
  next: number;
}

/**
 * Lists events after position `after`, oldest first: up to `limit` of the given types, examining
 * at most `maxExamined` events (so a narrow `types` filter cannot turn one request into a scan of
 * the whole week). Events past their 7 days are skipped even if KV has not deleted them yet.
 */
export async function listFeedEvents(
  kv: Deno.Kv,
  projectId: string,
  options: {
    after: number;
    limit: number;
    types: ReadonlySet<ServiceEventType> | null;
    now: number;
    maxExamined: number;
  },
): Promise<FeedPage> {
  const { after, limit, types, now, maxExamined } = options;
  const events: RecordedEvent[] = [];
  let next = after;
  let examined = 0;
  // A chunk that starts up to 49 positions before `after + 1` may still hold events after it.
  const start = Math.max(after - FEED_CHUNK_SIZE + 2, 1);
  const iter = kv.list<FeedChunk>({
    prefix: ["events", projectId],
    start: feedChunkKey(projectId, start),
  }, { batchSize: 20 });
  for await (const entry of iter) {
    const first = entry.key[2] as number;
    const chunk = entry.value;
    for (const [i, event] of chunk.events.entries()) {
      const position = first + i;
      if (position <= after) continue;
      next = position;
      examined++;
      if (chunk.expiresAt > now && (!types || types.has(event.type))) {
        events.push({ ...event, id: String(position), createdAt: chunk.createdAt });
      }
      if (events.length >= limit || examined >= maxExamined) return { events, next };
    }
  }
  return { events, next };
}

/**
 * The cursor just before the first event recorded at or after `since` (Unix ms), found by looking
 * back from the end of the feed over at most `maxExamined` events (a reader wanting the recent
 * events starts there; past the cap it starts at the oldest event examined). Relies on commit
 * order: a later position never has a much earlier `createdAt` (only clock skew between instances).
 */
export async function findRecentFeedCursor(
  kv: Deno.Kv,
  projectId: string,
  options: { since: number; maxExamined: number },
): Promise<number> {
  let cursor = 0;
  let examined = 0;
  const iter = kv.list<FeedChunk>({ prefix: ["events", projectId] }, {
    reverse: true,
    batchSize: 20,
  });
  for await (const entry of iter) {
    const first = entry.key[2] as number;
    if (entry.value.createdAt < options.since) return first + entry.value.events.length - 1;
    cursor = first - 1;
    examined += entry.value.events.length;
    if (examined >= options.maxExamined) return cursor;
  }
  return cursor;
}

/** Returns the event at position `id` (a feed id), or null when the feed no longer holds it. */
export async function getFeedEvent(
  kv: Deno.Kv,
  projectId: string,
  input: { id: string; now: number },
): Promise<RecordedEvent | null> {
  const position = Number(input.id);
  const page = await listFeedEvents(kv, projectId, {
    after: position - 1,
    limit: 1,
    types: null,
    now: input.now,
    maxExamined: 1,
  });
  const [event] = page.events;
  return event?.id === input.id ? event : null;
}

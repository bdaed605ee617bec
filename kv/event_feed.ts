/**
 * The per-project event feed: every event a project produces, in the order it was committed, kept
 * 7 days, read from a cursor by game servers (`GET /v1/events`).
 *
 * Why a counter and not time-ordered keys: a reader that has passed position N must never later
 * find an event at a position below N, or it misses it. With ULID or clock keys, an id taken before
 * a slow commit lands behind a cursor that a faster commit already moved past. So ids come from
 * one counter per project, `["event_seqs", projectId]`, and every commit that records events reads
 * it, checks it and moves it forward in the same atomic commit as the change the events report (a
 * link, a settled transaction, a watch poll), or as the move of pending events (`event_pending.ts`,
 * a busy project's settlements). Two commits that read the same counter value cannot both
 * succeed, so the commit writing events N+1.. always comes after the one writing N: the feed only
 * ever grows at its end, and every prefix a reader sees is complete. The price is that a
 * project's event-writing commits are serialized: one check per commit, and a retry with a fresh
 * read when another commit got in between (`lib/events/record.ts` queues them per project within
 * a process, so only other instances race; `docs/performance.md` has the numbers).
 *
 * Events of one commit share one entry (a chunk of at most 50, keyed by its first position), so a
 * poll that finds 1,000 transactions writes 20 entries, within KV's commit limits. An entry written
 * while the project publishes through its publisher (`lib/events/publisher.ts`) is marked
 * `outbox`: its events are that publisher's to send, and no delivery job was queued for them.
 */
import type { RecordedEvent, ServiceEvent, ServiceEventType } from "../core/events.ts";

/** How long events stay in the feed. */
const FEED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** Most events stored in one feed entry. */
export const FEED_CHUNK_SIZE = 50;

/** One feed entry: consecutive events recorded by one commit. */
interface FeedChunk {
  createdAt: number;
  /** `createdAt` + 7 days; re-checked on read (`expireIn` is only the earliest deletion). */
  expiresAt: number;
  events: ServiceEvent[];
  /** Present when the project's publisher sends these events (absent in older entries: false). */
  outbox?: true;
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
  input: {
    seq: Deno.KvEntryMaybe<number>;
    events: readonly ServiceEvent[];
    now: number;
    outbox?: boolean;
  },
): RecordedEvent[] {
  const { seq, events, now } = input;
  const last = seq.value ?? 0;
  op.check(seq).set(eventSeqKey(projectId), last + events.length);
  for (let i = 0; i < events.length; i += FEED_CHUNK_SIZE) {
    const chunk: FeedChunk = {
      createdAt: now,
      expiresAt: now + FEED_RETENTION_MS,
      events: events.slice(i, i + FEED_CHUNK_SIZE),
      ...(input.outbox ? { outbox: true as const } : {}),
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
  /** Events decoded from the store to answer (those of every entry read). */
  decoded: number;
}

// Most entries read from the store in one call.
const MAX_ENTRIES_PER_CALL = 20;

/**
 * Reads a project's feed entries a few at a time: each call asks for as many entries as the events
 * still allowed (`max` less `cost.decoded`) could fill, at least one, and adds every event read to
 * `cost.decoded` (read is decoded, yielded or not). A caller that stops once it went through `max`
 * events has then decoded at most `max` plus part of one entry, however few events each holds.
 */
async function* listFeedChunks(
  kv: Deno.Kv,
  selector: Deno.KvListSelector,
  options: { reverse: boolean; cost: { decoded: number; max: number } },
): AsyncGenerator<Deno.KvEntry<FeedChunk>> {
  const { reverse, cost } = options;
  let cursor: string | undefined;
  while (true) {
    const wanted = Math.min(
      MAX_ENTRIES_PER_CALL,
      Math.max(1, Math.ceil((cost.max - cost.decoded) / FEED_CHUNK_SIZE)),
    );
    const iter = kv.list<FeedChunk>(selector, {
      reverse,
      limit: wanted,
      batchSize: wanted,
      ...(cursor === undefined ? {} : { cursor }),
    });
    const entries = await Array.fromAsync(iter);
    for (const entry of entries) cost.decoded += entry.value.events.length;
    yield* entries;
    if (entries.length < wanted) return;
    cursor = iter.cursor;
  }
}

/**
 * Lists events after position `after`, oldest first: up to `limit` of the given types, reading
 * entries until about `maxDecoded` events were decoded once an event after `after` was examined
 * (so a narrow `types` filter or an old cursor cannot turn one request into a scan of the whole
 * week; `next` says where to continue). Events past their 7 days are skipped even if KV has not
 * deleted them yet. `outboxOnly` lists only events of entries marked `outbox`.
 */
export async function listFeedEvents(
  kv: Deno.Kv,
  projectId: string,
  options: {
    after: number;
    limit: number;
    types: ReadonlySet<ServiceEventType> | null;
    now: number;
    maxDecoded: number;
    outboxOnly?: boolean;
  },
): Promise<FeedPage> {
  const { after, limit, types, now } = options;
  const events: RecordedEvent[] = [];
  const cost = { decoded: 0, max: options.maxDecoded };
  let next = after;
  // A chunk that starts up to 49 positions before `after + 1` may still hold events after it.
  const start = Math.max(after - FEED_CHUNK_SIZE + 2, 1);
  const chunks = listFeedChunks(kv, {
    prefix: ["events", projectId],
    start: feedChunkKey(projectId, start),
  }, { reverse: false, cost });
  let examined = 0;
  for await (const entry of chunks) {
    const first = entry.key[2] as number;
    const chunk = entry.value;
    examined += chunk.events.length;
    for (const [i, event] of chunk.events.entries()) {
      const position = first + i;
      if (position <= after) continue;
      next = position;
      const wanted = !types || types.has(event.type);
      if (chunk.expiresAt > now && wanted && (!options.outboxOnly || chunk.outbox)) {
        events.push({ ...event, id: String(position), createdAt: chunk.createdAt });
        if (events.length >= limit) return { events, next, decoded: cost.decoded };
      }
    }
    if (next > after && examined >= cost.max) break;
  }
  return { events, next, decoded: cost.decoded };
}

/**
 * The cursor just before the first event recorded at or after `since` (Unix ms), found by looking
 * back from the end of the feed over about `maxDecoded` events (a reader wanting the recent
 * events starts there; past the cap it starts at the oldest event examined), and the events
 * decoded to find it. Relies on commit order: a later position never has a much earlier
 * `createdAt` (only clock skew between instances).
 */
export async function findRecentFeedCursor(
  kv: Deno.Kv,
  projectId: string,
  options: { since: number; maxDecoded: number },
): Promise<{ cursor: number; decoded: number }> {
  const cost = { decoded: 0, max: options.maxDecoded };
  let cursor = 0;
  let examined = 0;
  const chunks = listFeedChunks(kv, { prefix: ["events", projectId] }, { reverse: true, cost });
  for await (const entry of chunks) {
    const first = entry.key[2] as number;
    if (entry.value.createdAt < options.since) {
      return { cursor: first + entry.value.events.length - 1, decoded: cost.decoded };
    }
    cursor = first - 1;
    examined += entry.value.events.length;
    if (examined >= cost.max) break;
  }
  return { cursor, decoded: cost.decoded };
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
    maxDecoded: 1,
  });
  const [event] = page.events;
  return event?.id === input.id ? event : null;
}

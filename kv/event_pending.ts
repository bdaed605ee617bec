/**
 * Events waiting for their place in the project's feed: `["event_pending", projectId, id]`.
 *
 * A commit that takes feed ids checks the project's feed counter (`event_feed.ts`), so such
 * commits of one project go one at a time. A payout's settlement instead writes its `tx` event
 * here, in its own checked commit and without the counter, and `lib/events/pending.ts` moves
 * pending events into the feed in batches, each batch in one commit under the counter that also
 * deletes its pending entries: an event is in the feed exactly once, and the feed keeps its order
 * guarantee. Entries are keyed by a monotonic ULID, so a project's pending events are listed
 * roughly in the order they were committed (order between events is not guaranteed by the spec).
 */
import type { ServiceEvent } from "../core/events.ts";
import { monotonicUlid } from "../core/ids.ts";

/** One pending entry: the events of one commit. */
interface PendingEvents {
  createdAt: number;
  events: ServiceEvent[];
}

function pendingKey(projectId: string, id: string): Deno.KvKey {
  return ["event_pending", projectId, id];
}

/** Adds `events` to `op` as one pending entry of the project (no check: its key is fresh). */
export function addPendingEvents(
  op: Deno.AtomicOperation,
  projectId: string,
  input: { events: readonly ServiceEvent[]; now: number },
): void {
  const entry: PendingEvents = { createdAt: input.now, events: [...input.events] };
  op.set(pendingKey(projectId, monotonicUlid()), entry);
}

/** Lists the project's oldest pending entries, at most `limit`. */
export async function listPendingEvents(
  kv: Deno.Kv,
  projectId: string,
  options: { limit: number },
): Promise<Deno.KvEntry<PendingEvents>[]> {
  const iter = kv.list<PendingEvents>({ prefix: ["event_pending", projectId] }, {
    limit: options.limit,
    batchSize: options.limit,
  });
  return await Array.fromAsync(iter);
}

/**
 * The projects whose oldest pending entry was written before `before` (Unix ms), one read per
 * project that has any (entries normally live for one commit's time).
 */
export async function* listStalePendingProjects(
  kv: Deno.Kv,
  options: { before: number },
): AsyncGenerator<string> {
  const prefix = ["event_pending"];
  let selector: Deno.KvListSelector = { prefix };
  while (true) {
    const iter = kv.list<PendingEvents>(selector, { limit: 1 });
    const [oldest] = await Array.fromAsync(iter);
    if (!oldest) return;
    const projectId = oldest.key[1] as string;
    if (oldest.value.createdAt < options.before) yield projectId;
    // The first key after every key of this project.
    selector = { prefix, start: ["event_pending", `${projectId}\0`] };
  }
}

/**
 * Recording events: each event gets its feed id in the same atomic commit as the change it reports,
 * and, when the project's events are on, its delivery job in that commit too. The feed entry is
 * written whether events are on or off, so a game can follow the feed alone (`kv/event_feed.ts`
 * explains the ordering guarantee).
 */
import { addFeedEvents, getEventSeqEntry } from "../../kv/event_feed.ts";
import { addJob } from "../../kv/jobs.ts";
import type { AppContext } from "../context.ts";
import type { RecordedEvent, ServiceEvent } from "./types.ts";

// Events delivered by one fan-out job; more than this in one commit go through `publish_batch`
// jobs, which keeps a 1,000-transaction watch poll far under KV's mutation and size limits.
const DIRECT_DELIVERY_MAX = 50;
const MAX_ROUNDS = 100;

/** What `addEvents` added. */
export interface AddedEvents {
  events: RecordedEvent[];
  /** True when delivery jobs were added (call `ctx.jobWaker.wake()` after the commit). */
  delivering: boolean;
}

/**
 * Adds `events` to the caller's atomic operation: their feed entries under fresh ids (one check
 * on the project's feed counter) and, when events are on, their delivery jobs (none with
 * `deliver: false`). Call it once per operation, in each round of the caller's retry loop (the
 * counter is read here).
 */
export async function addEvents(
  ctx: AppContext,
  op: Deno.AtomicOperation,
  projectId: string,
  events: readonly ServiceEvent[],
  options: { deliver?: boolean } = {},
): Promise<AddedEvents> {
  if (events.length === 0) return { events: [], delivering: false };
  const [seq, target] = await Promise.all([
    getEventSeqEntry(ctx.kv, projectId),
    options.deliver === false ? null : ctx.events.targets.get(projectId),
  ]);
  const recorded = addFeedEvents(op, projectId, { seq, events, now: ctx.clock.now() });
  if (!target) return { events: recorded, delivering: false };
  if (recorded.length <= DIRECT_DELIVERY_MAX) {
    for (const event of recorded) addJob(op, { type: "deliver_event", projectId, event });
  } else {
    for (let i = 0; i < recorded.length; i += DIRECT_DELIVERY_MAX) {
      const batch = recorded.slice(i, i + DIRECT_DELIVERY_MAX);
      addJob(op, { type: "publish_batch", projectId, events: batch });
    }
  }
  return { events: recorded, delivering: true };
}

/**
 * Records events in a commit of their own (an event that reports no other change, such as a test
 * ping), retrying when another commit took the next ids first.
 */
export async function recordEvents(
  ctx: AppContext,
  projectId: string,
  events: readonly ServiceEvent[],
  options: { deliver?: boolean } = {},
): Promise<RecordedEvent[]> {
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const op = ctx.kv.atomic();
    const added = await addEvents(ctx, op, projectId, events, options);
    if ((await op.commit()).ok) {
      if (added.delivering) ctx.jobWaker.wake();
      return added.events;
    }
  }
  throw new Error("Cannot record the events: too many concurrent changes");
}

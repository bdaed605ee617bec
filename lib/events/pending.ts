/**
 * Pending events into the feed. A payout's settlement that is not the only one of its project in
 * flight on its instance writes its `tx` event to the project's pending area
 * (`kv/event_pending.ts`) in its own checked commit, so the settlements of one project never queue
 * behind its feed counter; `movePendingEvents` then moves the project's pending events into the
 * feed in batches, one commit each through `commitWithEvents` (feed ids under the counter,
 * delivery jobs, webhook deliveries, `outbox` marks), with the deletion of the pending entries in
 * that commit.
 *
 * Exactly once: a mover reads the counter (and the webhook endpoints) first and lists pending
 * entries after, and its commit checks the counter. A mover that listed an entry before another
 * moved it read the counter before that move, so its commit fails and it lists again; one that
 * read the counter after the move lists after it too, and no longer finds the entry.
 *
 * The only settlement of its project in flight on its instance, which records no other events of
 * the project at the moment (a project paying now and then), records its events in the feed in its
 * own commit instead (`whenFeedIsQuiet`): its answer then waits for no further commit. If it loses
 * that commit's checks, its next round goes through the pending events.
 *
 * Who moves: the settling instance, right after its commit (moves of one project on one instance
 * run one at a time, and a settlement arriving meanwhile waits for the next, which takes every
 * entry written by then: under a burst each commit moves dozens); the minute sweep moves what an
 * instance that died between the two commits left (`moveStalePendingEvents`).
 */
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { log } from "../../core/log.ts";
import { getEventSeqEntry } from "../../kv/event_feed.ts";
import { listPendingEvents, listStalePendingProjects } from "../../kv/event_pending.ts";
import { getWebhookTargetsEntry } from "../../kv/webhooks.ts";
import { commitWithEvents } from "./record.ts";
import type { EventContext } from "./runtime.ts";

/** Pending entries moved by one commit (each holds the events of one settlement: 1 to 10). */
const MOVE_BATCH = 50;
/** Entries older than this are the sweep's: their instance had time to move them. */
const STALE_AFTER_MS = 30_000;

/**
 * Moves every pending event of the project into the feed: the entries written before the call, at
 * least. Never throws (it runs after the commit that wrote the entries, which must not look failed):
 * what it could not move is moved by the next call or the minute sweep.
 */
export async function movePendingEvents(ctx: EventContext, projectId: string): Promise<void> {
  try {
    await ctx.events.pendingMoves.run(projectId, () => moveAll(ctx, projectId));
  } catch (error) {
    log("error", "Cannot move pending events into the feed", { projectId, error });
  }
}

/**
 * Moves the pending events of every project that has some older than 30 s (for the minute cron's
 * sweep); returns how many projects it moved events of.
 */
export async function moveStalePendingEvents(ctx: EventContext): Promise<number> {
  let moved = 0;
  const before = ctx.clock.now() - STALE_AFTER_MS;
  for await (const projectId of listStalePendingProjects(ctx.kv, { before })) {
    log("warn", "Pending events left by their instance moved into the feed", { projectId });
    await movePendingEvents(ctx, projectId);
    moved++;
  }
  return moved;
}

/** Runs `settle`, a settlement of the project, counted among this process's in flight. */
export async function countSettlement<T>(
  ctx: EventContext,
  projectId: string,
  settle: () => Promise<T>,
): Promise<T> {
  const { settling } = ctx.events;
  settling.set(projectId, (settling.get(projectId) ?? 0) + 1);
  try {
    return await settle();
  } finally {
    const left = settling.get(projectId)! - 1;
    if (left === 0) settling.delete(projectId);
    else settling.set(projectId, left);
  }
}

/**
 * Runs `record` (a settlement's commit recording its events in the feed) when it is this process's
 * only settlement of the project in flight (`countSettlement`) and the process neither records nor
 * moves other events of the project; answers null, running nothing, otherwise.
 */
export async function whenFeedIsQuiet<T>(
  ctx: EventContext,
  projectId: string,
  record: () => Promise<T>,
): Promise<T | null> {
  const { events } = ctx;
  const busy = (events.settling.get(projectId) ?? 0) > 1 || events.feedLocks.busy(projectId) ||
    events.pendingMoves.busy(projectId);
  return busy ? null : await record();
}

async function moveAll(ctx: EventContext, projectId: string): Promise<void> {
  while (await moveBatch(ctx, projectId) === MOVE_BATCH) {
    // A full batch: more may wait.
  }
}

// Moves up to MOVE_BATCH pending entries in one commit; returns how many it moved.
async function moveBatch(ctx: EventContext, projectId: string): Promise<number> {
  return await commitWithRetry("move pending events into the feed", async () => {
    const [seq, hooks] = await Promise.all([
      getEventSeqEntry(ctx.kv, projectId),
      getWebhookTargetsEntry(ctx.kv, projectId),
    ]);
    const pending = await listPendingEvents(ctx.kv, projectId, { limit: MOVE_BATCH });
    if (pending.length === 0) return 0;
    const op = ctx.kv.atomic();
    for (const entry of pending) op.delete(entry.key);
    const events = pending.flatMap((entry) => entry.value.events);
    const committed = await commitWithEvents(ctx, op, { projectId, events, reads: { seq, hooks } });
    return committed.ok ? pending.length : RETRY;
  });
}

/**
 * Recording events: each event gets its feed id in the same atomic commit as the change it reports,
 * and, when the project's events are on, its delivery job in that commit too, with its deliveries
 * to the project's webhook endpoints (`lib/webhooks/fan_out.ts`). A project that packs events or
 * caps its messages a minute gets no delivery job per event: its feed entry is marked `outbox`
 * for the project's publisher (`publisher.ts`), started after the commit if it does not run. The feed entry is written
 * whether events are on or off, so a game can follow the feed alone (`kv/event_feed.ts` explains
 * the ordering guarantee).
 *
 * Every such commit checks the project's feed counter, so two of them racing for the same ids
 * cannot both succeed. Within one process they are therefore queued per project: the counter is
 * read and the commit sent under a per-project lock, which leaves only other instances to race
 * with. Without it a burst of such commits retries each about as many times as there are commits in
 * flight. Payouts' settlements of a busy project do not take this turn: their events go through the project's
 * pending events (`pending.ts`), whose moves take it once for dozens of events.
 */
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { addFeedEvents, getEventSeqEntry } from "../../kv/event_feed.ts";
import { addEventJob, DIRECT_DELIVERY_MAX } from "./job_payloads.ts";
import type { EventContext } from "./runtime.ts";
import type { RecordedEvent, ServiceEvent } from "../../core/events.ts";
import { publishesThroughPublisher, publishTargetFor } from "./settings.ts";
import { ensurePublisher } from "./publisher_loop.ts";
import { addAuditEntry, type AuditInput } from "../../kv/audit_log.ts";
import { getWebhookTargetsEntry } from "../../kv/webhooks.ts";
import { addWebhookDeliveries } from "../webhooks/fan_out.ts";

/** How a commit with events ended. */
interface EventsCommit {
  /** False when one of the operation's checks failed: nothing was written. */
  ok: boolean;
  events: RecordedEvent[];
  /** True when Roblox delivery jobs were written (the job worker was woken). */
  delivering: boolean;
}

/**
 * Commits the caller's atomic operation together with `events`: their feed entries under fresh ids
 * (one more check, on the project's feed counter) and, unless `deliver` is false, their delivery
 * jobs (to Roblox when events are on; to each webhook endpoint, one more check on the project's
 * endpoints). Use it instead of `op.commit()`, once per operation, and retry like any checked
 * commit when it is not ok. `deliver: false` is for an event its caller sends itself (a test).
 */
export async function commitWithEvents(
  ctx: EventContext,
  op: Deno.AtomicOperation,
  input: {
    projectId: string;
    events: readonly ServiceEvent[];
    deliver?: boolean | undefined;
    /** When the delivery of the i-th event falls due; at once by default. */
    dueAt?: (index: number) => number;
    /** Gives up waiting for the project's turn when it aborts (rejecting with its reason). */
    signal?: AbortSignal | undefined;
    /**
     * The feed counter, read by the caller before what `op` depends on, and the project's webhook
     * endpoints, read with it (both are checked by the commit).
     */
    reads?: { seq: Deno.KvEntryMaybe<number>; hooks: Deno.KvEntryMaybe<string[]> } | undefined;
  },
): Promise<EventsCommit> {
  const { projectId, events } = input;
  if (events.length === 0) return { ok: (await op.commit()).ok, events: [], delivering: false };
  const deliver = input.deliver !== false;
  const target = deliver ? await publishTargetFor(ctx, projectId) : null;
  const outbox = target !== null && publishesThroughPublisher(target);
  const committed = await ctx.events.feedLocks.run(projectId, async () => {
    const [seq, hooks] = input.reads
      ? [input.reads.seq, deliver ? input.reads.hooks : null]
      : await Promise.all([
        getEventSeqEntry(ctx.kv, projectId),
        deliver ? getWebhookTargetsEntry(ctx.kv, projectId) : null,
      ]);
    const now = ctx.clock.now();
    const dueAt = input.dueAt ?? (() => ctx.clock.now());
    const recorded = addFeedEvents(op, projectId, { seq, events, now, outbox });
    if (target && !outbox) addDeliveries(op, projectId, recorded, dueAt);
    const hooked = hooks !== null &&
      addWebhookDeliveries(op, hooks, { projectId, events: recorded, now, dueAt });
    const ok = (await op.commit()).ok;
    return { ok, events: recorded, delivering: target !== null, woke: target !== null || hooked };
  }, { signal: input.signal });
  if (!committed.ok) return { ok: false, events: [], delivering: false };
  ctx.events.heads.moved(projectId, Number(committed.events.at(-1)!.id));
  if (outbox) {
    await ensurePublisher(ctx, projectId, { after: Number(committed.events[0]!.id) - 1 });
  }
  if (committed.woke) ctx.jobWaker.wake();
  return { ok: true, events: committed.events, delivering: committed.delivering };
}

/**
 * Records events in a commit of their own (events that report no other change, such as a test
 * ping, whose `audit` entry goes in the same commit), retrying when another instance took the
 * next ids first.
 */
export async function recordEvents(
  ctx: EventContext,
  projectId: string,
  events: readonly ServiceEvent[],
  options: { deliver?: boolean; audit?: AuditInput | undefined } = {},
): Promise<RecordedEvent[]> {
  return await commitWithRetry("record the events", async () => {
    const op = ctx.kv.atomic();
    if (options.audit) addAuditEntry(op, options.audit);
    const committed = await commitWithEvents(ctx, op, {
      projectId,
      events,
      deliver: options.deliver,
    });
    if (committed.ok) return committed.events;
    return RETRY;
  });
}

function addDeliveries(
  op: Deno.AtomicOperation,
  projectId: string,
  events: readonly RecordedEvent[],
  dueAt: (index: number) => number,
): void {
  if (events.length <= DIRECT_DELIVERY_MAX) {
    for (const [i, event] of events.entries()) {
      addEventJob(op, { type: "deliver_event", projectId, event }, { runAt: dueAt(i) });
    }
    return;
  }
  for (let i = 0; i < events.length; i += DIRECT_DELIVERY_MAX) {
    const batch = events.slice(i, i + DIRECT_DELIVERY_MAX);
    addEventJob(op, { type: "publish_batch", projectId, events: batch }, { runAt: dueAt(i) });
  }
}

/**
 * Webhooks as a consumer of recorded events: the commit that records events (`lib/events/record.ts`)
 * also adds their deliveries to the project's endpoints, so a crash can never record an event
 * without queueing its webhooks.
 *
 * That commit checks the project's list of endpoints (`["webhook_targets", projectId]`), read with
 * the feed counter: an endpoint added or removed by any instance meanwhile fails the commit, which
 * is then retried on fresh reads. So an endpoint receives exactly the events committed after it was
 * added, on every instance, with no cache to wait for. A project without endpoints pays one read
 * and one check per commit.
 */
import type { RecordedEvent } from "../../core/events.ts";
import { addWebhookJob } from "./job_payloads.ts";
import { monotonicUlid } from "../../core/ids.ts";

/**
 * Most delivery jobs one event commit adds (one per event and endpoint); beyond that it adds one
 * fan-out job per endpoint instead, which keeps a 1,000-event watch poll within KV's commit limits.
 */
const DIRECT_DELIVERIES_MAX = 50;

/**
 * Adds to an event commit the check of the project's endpoints (`targets`, as read for it) and the
 * delivery of `events` to each; answers whether jobs were added. `dueAt(i)` is when the i-th
 * event's delivery falls due.
 */
export function addWebhookDeliveries(
  op: Deno.AtomicOperation,
  targets: Deno.KvEntryMaybe<string[]>,
  input: {
    projectId: string;
    events: readonly RecordedEvent[];
    now: number;
    dueAt: (index: number) => number;
  },
): boolean {
  op.check(targets);
  const endpointIds = targets.value ?? [];
  const { projectId, events, now } = input;
  if (endpointIds.length === 0 || events.length === 0) return false;
  if (events.length * endpointIds.length <= DIRECT_DELIVERIES_MAX) {
    for (const endpointId of endpointIds) {
      for (const [i, event] of events.entries()) {
        addDeliverJob(op, { projectId, endpointId, eventId: event.id, now, runAt: input.dueAt(i) });
      }
    }
    return true;
  }
  const after = Number(events[0]!.id) - 1;
  const last = Number(events.at(-1)!.id);
  for (const endpointId of endpointIds) {
    addWebhookJob(op, {
      type: "webhook_fan_out",
      projectId,
      endpointId,
      after,
      last,
      queuedAt: now,
    }, { runAt: input.dueAt(0) });
  }
  return true;
}

/** Adds the delivery of one event to one endpoint (a fresh delivery id) to `op`; returns its id. */
export function addDeliverJob(
  op: Deno.AtomicOperation,
  input: {
    projectId: string;
    endpointId: string;
    eventId: string;
    now: number;
    runAt: number;
    trigger?: "event" | "replay";
  },
): string {
  const deliveryId = monotonicUlid();
  addWebhookJob(op, {
    type: "webhook_deliver",
    projectId: input.projectId,
    endpointId: input.endpointId,
    eventId: input.eventId,
    deliveryId,
    trigger: input.trigger ?? "event",
    queuedAt: input.now,
  }, { runAt: input.runAt });
  return deliveryId;
}

/** Per-project delivery log: the last 100 event deliveries, for the dashboard and for support. */
import { ulid } from "../core/ids.ts";
import type { ServiceEventType } from "../core/events.ts";
import { addDeliveryUsage } from "./usage.ts";
import { trimToNewest } from "./log_trim.ts";

/** How a delivery ended. */
export type DeliveryOutcome =
  /** The messaging service accepted the message. */
  | "delivered"
  /** Answered with a status that is not retried (400, 401, 403...): dropped. */
  | "rejected"
  /** Still failing (network, timeout, 429, 5xx) after the last attempt: dropped. */
  | "gave_up"
  /** Events were turned off (or the project deleted) before delivery: nothing sent. */
  | "skipped"
  /**
   * The messaging service accepted a burst notice covering the event (packing extension,
   * `lib/events/notice.ts`): servers read it from the feed.
   */
  | "notice";

/** One delivery as logged. */
export interface Delivery {
  id: string;
  at: number;
  type: ServiceEventType;
  /** The event's feed id (the `id` its message carried). */
  eventId: string;
  outcome: DeliveryOutcome;
  attempts: number;
  /** HTTP status of the last attempt; null for timeouts, network errors and skips. */
  status: number | null;
  /** Short reason for a failure; never contains the key. */
  error: string | null;
}

/** Deliveries kept per project. */
export const DELIVERY_LOG_SIZE = 100;
// A backstop for projects that stop publishing; the trim keeps the count at 100.
const DELIVERY_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** Key of one delivery log entry. */
function deliveryKey(projectId: string, id: string): Deno.KvKey {
  return ["deliveries", projectId, id];
}

/** Appends a delivery and its usage count to `op` (so they land with the job's completion). */
export function addDelivery(
  op: Deno.AtomicOperation,
  projectId: string,
  input: Omit<Delivery, "id">,
): Delivery {
  const delivery: Delivery = { id: ulid(input.at), ...input };
  op.set(deliveryKey(projectId, delivery.id), delivery, { expireIn: DELIVERY_TTL_MS });
  addUnloggedDeliveries(op, projectId, { at: input.at, outcome: input.outcome, count: 1 });
  return delivery;
}

/**
 * Appends to `op` the usage count of `count` deliveries left out of the log (a notice's events
 * beyond the newest the log keeps).
 */
export function addUnloggedDeliveries(
  op: Deno.AtomicOperation,
  projectId: string,
  input: { at: number; outcome: DeliveryOutcome; count: number },
): void {
  if (input.outcome === "skipped" || input.count === 0) return;
  const reached = input.outcome === "delivered" || input.outcome === "notice";
  addDeliveryUsage(op, projectId, {
    at: input.at,
    tally: reached ? "delivered" : "dropped",
    count: input.count,
  });
}

/** Lists the project's logged deliveries, newest first. */
export async function listDeliveries(
  kv: Deno.Kv,
  projectId: string,
  limit = DELIVERY_LOG_SIZE,
): Promise<Delivery[]> {
  const out: Delivery[] = [];
  const iter = kv.list<Delivery>({ prefix: ["deliveries", projectId] }, { reverse: true, limit });
  for await (const entry of iter) out.push(entry.value);
  return out;
}

/** Deletes all but the newest 100 entries of the project's log. */
export async function trimDeliveries(kv: Deno.Kv, projectId: string): Promise<void> {
  await trimToNewest(kv, ["deliveries", projectId], DELIVERY_LOG_SIZE);
}

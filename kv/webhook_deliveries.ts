/**
 * Per-project webhook delivery log: one entry per delivery of one event to one endpoint, rewritten
 * by each attempt (in the commit that ends the attempt's job), so it always shows the latest state.
 * The newest 1,000 are kept, each at most 7 days (as long as the feed keeps its event).
 */
import type { ServiceEventType } from "../core/events.ts";
import { trimToNewest } from "./log_trim.ts";

/** Where a delivery stands. */
export type WebhookDeliveryStatus =
  /** Waiting for its first attempt (a replay, until the worker takes it). */
  | "queued"
  /** An attempt failed and another is scheduled (`nextAttemptAt`). */
  | "retrying"
  /** The endpoint answered 2xx. */
  | "delivered"
  /** Given up: an answer that is not retried, a refused address, or no success within 24 hours. */
  | "failed";

/** Why a delivery was made. */
export type WebhookTrigger = "event" | "replay" | "test";

/** One delivery as logged. */
export interface WebhookDelivery {
  /** A ULID: the log's order. */
  id: string;
  endpointId: string;
  /** The endpoint's URL when the delivery was made. */
  url: string;
  /** The event's feed id (the body's `id`). */
  eventId: string;
  /** Null when the event had left the feed before the delivery read it. */
  eventType: ServiceEventType | null;
  trigger: WebhookTrigger;
  status: WebhookDeliveryStatus;
  /** Attempts made so far. */
  attempts: number;
  createdAt: number;
  /** When the last attempt ended (or the delivery was queued). */
  updatedAt: number;
  nextAttemptAt: number | null;
  /** HTTP status of the last attempt; null when nothing answered. */
  responseStatus: number | null;
  /** What went wrong with the last attempt, for people; null when it succeeded. */
  error: string | null;
  /** The start of the last answer's body (at most 200 characters). */
  answer: string | null;
  durationMs: number | null;
}

/** Deliveries kept per project. */
export const WEBHOOK_LOG_SIZE = 1_000;
/** How long a delivery is kept: as long as its event stays in the feed, where a replay reads it. */
const WEBHOOK_LOG_TTL_MS = 7 * 24 * 60 * 60 * 1000;

function webhookDeliveryKey(projectId: string, id: string): Deno.KvKey {
  return ["webhook_deliveries", projectId, id];
}

/** Appends "the delivery is now `delivery`" to `op` (a blind set: each attempt writes its state). */
export function setWebhookDelivery(
  op: Deno.AtomicOperation,
  projectId: string,
  delivery: WebhookDelivery,
): void {
  op.set(webhookDeliveryKey(projectId, delivery.id), delivery, { expireIn: WEBHOOK_LOG_TTL_MS });
}

/** Returns a logged delivery, or null. */
export async function getWebhookDelivery(
  kv: Deno.Kv,
  projectId: string,
  id: string,
): Promise<WebhookDelivery | null> {
  return (await kv.get<WebhookDelivery>(webhookDeliveryKey(projectId, id))).value;
}

/** One page of the log. */
interface WebhookDeliveryPage {
  deliveries: WebhookDelivery[];
  /** The `after` of the next (older) page; null at the oldest. */
  next: string | null;
}

/**
 * Lists deliveries newest first, older than the delivery `after` when given, only those matching
 * `endpointId` and `status` when given (examining at most the 1,000 kept).
 */
export async function listWebhookDeliveries(
  kv: Deno.Kv,
  projectId: string,
  options: {
    limit: number;
    after?: string | undefined;
    endpointId?: string | undefined;
    status?: WebhookDeliveryStatus | undefined;
  },
): Promise<WebhookDeliveryPage> {
  const prefix = ["webhook_deliveries", projectId];
  const iter = kv.list<WebhookDelivery>(
    options.after ? { prefix, end: webhookDeliveryKey(projectId, options.after) } : { prefix },
    { reverse: true, limit: WEBHOOK_LOG_SIZE },
  );
  const deliveries: WebhookDelivery[] = [];
  for await (const { value } of iter) {
    if (options.endpointId && value.endpointId !== options.endpointId) continue;
    if (options.status && value.status !== options.status) continue;
    if (deliveries.length === options.limit) return { deliveries, next: deliveries.at(-1)!.id };
    deliveries.push(value);
  }
  return { deliveries, next: null };
}

/** Deletes all but the newest 1,000 deliveries of the project's log. */
export async function trimWebhookDeliveries(kv: Deno.Kv, projectId: string): Promise<void> {
  await trimToNewest(kv, ["webhook_deliveries", projectId], WEBHOOK_LOG_SIZE);
}

/**
 * The `webhook_deliver` and `webhook_fan_out` job handlers: the background half of webhooks.
 *
 * A delivery is one job in the `webhooks` lane, so the worker's fairness holds for it: each project
 * has its own queue in the lane, and all the projects of one developer together run at most half
 * of the lane's slots, so one developer's slow or failing endpoints never hold back another's
 * deliveries (nor, being in their own lane, anyone's Roblox deliveries or payouts).
 *
 * Each run is one attempt (`attempt.ts`). A failure worth retrying is tried again after 10 s,
 * 1 min, 5 min, 30 min, 1 h, 2 h, 4 h, 8 h and 8 h (10 attempts, the last about 23.6 hours after
 * the first), and the delivery is given up 24 hours after it was queued. Each attempt rewrites the
 * delivery's log entry in the commit that ends it, and writes one JSON log line.
 */
import { getFeedEvent } from "../../kv/event_feed.ts";
import { getProject } from "../../kv/projects.ts";
import { getWebhookEndpointEntry } from "../../kv/webhooks.ts";
import {
  setWebhookDelivery,
  trimWebhookDeliveries,
  type WebhookDelivery,
} from "../../kv/webhook_deliveries.ts";
import { log } from "../../core/log.ts";
import type { JobOutcome, JobRun } from "../job_handler.ts";
import { attemptDelivery, type AttemptResult, recordAttempt } from "./attempt.ts";
import { addDeliverJob } from "./fan_out.ts";
import type { WebhookDeliverJob, WebhookFanOutJob } from "./job_payloads.ts";
import type { WebhookContext } from "./runtime.ts";

/** Waits after the 1st, 2nd, ... failed attempt; the attempt after the last is the final one. */
export const RETRY_DELAYS_MS = [
  10_000,
  60_000,
  5 * 60_000,
  30 * 60_000,
  60 * 60_000,
  2 * 60 * 60_000,
  4 * 60 * 60_000,
  8 * 60 * 60_000,
  8 * 60 * 60_000,
] as const;
/** A delivery is given up this long after it was queued. */
export const DELIVERY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Deliveries one fan-out run queues. */
const FAN_OUT_BATCH = 50;

/** Runs one attempt of a `webhook_deliver` job. */
export async function runWebhookDelivery(
  run: JobRun<WebhookDeliverJob, WebhookContext>,
): Promise<JobOutcome> {
  const { ctx, payload, attempt } = run;
  const { projectId, endpointId, eventId } = payload;
  const fields = { ...run.logFields, endpointId, eventId, deliveryId: payload.deliveryId };
  const now = ctx.clock.now();
  const [project, endpoint, event] = await Promise.all([
    getProject(ctx.kv, projectId),
    getWebhookEndpointEntry(ctx.kv, projectId, endpointId),
    getFeedEvent(ctx.kv, projectId, { id: eventId, now }),
  ]);
  if (!project || project.deletedAt !== null) {
    log("info", "Webhook delivery dropped: the project was deleted", fields);
    return { kind: "drop", reason: "project deleted" };
  }
  if (!endpoint.value) {
    log("info", "Webhook delivery dropped: the endpoint was removed", fields);
    return { kind: "drop", reason: "endpoint removed" };
  }
  const base: WebhookDelivery = {
    id: payload.deliveryId,
    endpointId,
    url: endpoint.value.url,
    eventId,
    eventType: event?.type ?? null,
    trigger: payload.trigger,
    status: "failed",
    attempts: attempt,
    createdAt: payload.queuedAt,
    updatedAt: now,
    nextAttemptAt: null,
    responseStatus: null,
    error: null,
    answer: null,
    durationMs: null,
  };
  const trim = Math.random() < 0.05 ? () => trimWebhookDeliveries(ctx.kv, projectId) : undefined;
  if (!event) {
    setWebhookDelivery(run.op, projectId, { ...base, error: "The event is no longer in the feed" });
    log("warn", "Webhook delivery failed: the event left the feed", fields);
    return { kind: "done", afterCommit: trim };
  }
  const expired = now - payload.queuedAt >= DELIVERY_WINDOW_MS;
  const result: AttemptResult = expired
    ? {
      verdict: "failed",
      responseStatus: null,
      error: "Not delivered within 24 hours",
      answer: null,
      durationMs: 0,
    }
    : await attemptDelivery(ctx, { endpoint: endpoint.value, event });
  const end = ctx.clock.now();
  const delay = RETRY_DELAYS_MS[attempt - 1];
  const retryAt = result.verdict === "retry" && delay !== undefined ? end + delay : null;
  const giveUp = retryAt === null || retryAt - payload.queuedAt >= DELIVERY_WINDOW_MS;
  const status = result.verdict === "delivered" ? "delivered" : giveUp ? "failed" : "retrying";
  recordAttempt(run.op, projectId, {
    delivery: {
      ...base,
      eventType: event.type,
      status,
      attempts: expired ? attempt - 1 : attempt,
      updatedAt: end,
      nextAttemptAt: status === "retrying" ? retryAt : null,
      responseStatus: result.responseStatus,
      error: result.error,
      answer: result.answer,
      durationMs: result.durationMs,
    },
    fields: run.logFields,
  });
  if (status === "retrying") return { kind: "retry", at: retryAt!, error: result.error ?? "" };
  return { kind: "done", afterCommit: trim };
}

/** Queues the deliveries of the next 50 events of a fan-out, in the job's own commit. */
export function runWebhookFanOut(
  run: JobRun<WebhookFanOutJob, WebhookContext>,
): Promise<JobOutcome> {
  const { payload, now } = run;
  const end = Math.min(payload.after + FAN_OUT_BATCH, payload.last);
  for (let position = payload.after + 1; position <= end; position++) {
    addDeliverJob(run.op, {
      projectId: payload.projectId,
      endpointId: payload.endpointId,
      eventId: String(position),
      now: payload.queuedAt,
      runAt: now,
    });
  }
  const afterCommit = () => run.ctx.jobWaker.wake();
  if (end >= payload.last) return Promise.resolve({ kind: "done", afterCommit });
  return Promise.resolve({
    kind: "continue",
    at: now,
    payload: { ...payload, after: end },
    afterCommit,
  });
}

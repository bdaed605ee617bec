/**
 * The dashboard's webhook test: a `ping` event recorded in the feed (so it has an id like any
 * event) and sent at once to one endpoint, signed and posted like every delivery, its answer shown
 * to the developer. One attempt, not retried; it goes to that endpoint only (not to Roblox, not
 * to the other endpoints), and is logged in the delivery log, from where it can be replayed.
 */
import type { AppContext } from "../context.ts";
import { must } from "../../core/must.ts";
import { getWebhookEndpointEntry } from "../../kv/webhooks.ts";
import { recordEvents } from "../events/record.ts";
import { attemptDelivery, recordAttempt } from "../webhooks/attempt.ts";
import { webhookNotFound } from "../webhooks/endpoints.ts";
import { noteWebhookChange, webhookAudit } from "../webhooks/audit.ts";
import { monotonicUlid } from "../../core/ids.ts";

/** What the dashboard shows after a webhook test. */
export interface WebhookPingResult {
  ok: boolean;
  /** HTTP status of the endpoint's answer; null when nothing answered. */
  status: number | null;
  message: string;
  deliveryId: string;
  eventId: string;
}

/** Sends a `ping` event to one endpoint now; 404 `webhook_not_found` when the project has none such. */
export async function sendWebhookPing(
  ctx: AppContext,
  input: { projectId: string; endpointId: string; actor: string },
): Promise<WebhookPingResult> {
  const { projectId } = input;
  const endpoint = (await getWebhookEndpointEntry(ctx.kv, projectId, input.endpointId)).value;
  if (!endpoint) throw webhookNotFound();
  const now = ctx.clock.now();
  // The test is recorded with the ping's own commit; its outcome is in the delivery log.
  const change = {
    action: "webhook_test_sent",
    projectId,
    actor: input.actor,
    endpointId: endpoint.id,
    url: endpoint.url,
  } as const;
  const recorded = await recordEvents(ctx, projectId, [{ type: "ping", at: now }], {
    deliver: false,
    audit: webhookAudit(change, now),
  });
  noteWebhookChange(change);
  const event = must(recorded[0], "the recorded ping");
  const result = await attemptDelivery(ctx, { endpoint, event });
  const ok = result.verdict === "delivered";
  const deliveryId = monotonicUlid();
  const op = ctx.kv.atomic();
  recordAttempt(op, projectId, {
    delivery: {
      id: deliveryId,
      endpointId: endpoint.id,
      url: endpoint.url,
      eventId: event.id,
      eventType: "ping",
      trigger: "test",
      status: ok ? "delivered" : "failed",
      attempts: 1,
      createdAt: now,
      updatedAt: ctx.clock.now(),
      nextAttemptAt: null,
      responseStatus: result.responseStatus,
      error: result.error,
      answer: result.answer,
      durationMs: result.durationMs,
    },
    fields: {},
  });
  await op.commit();
  const message = ok
    ? `Delivered: the endpoint answered HTTP ${result.responseStatus}`
    : `Not delivered: ${result.error}`;
  return { ok, status: result.responseStatus, message, deliveryId, eventId: event.id };
}

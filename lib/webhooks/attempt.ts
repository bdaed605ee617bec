/**
 * One attempt to deliver one event to one endpoint, and what it means: the step the delivery job,
 * a replay and the dashboard's test share.
 *
 * The body is the event exactly as `GET /v1/events` lists it (`feedEntryOf`), signed at the
 * moment of sending (`signature.ts`). A 2xx answer delivers it. Every other answer, a timeout and
 * a network error are worth another attempt, as Standard Webhooks' senders do: a 404 or a 401 is
 * as often a receiver in the middle of a deploy or a proxy misconfigured for an hour as a final
 * refusal, and the schedule's 10 attempts cost a refusing receiver little. A 3xx is not followed
 * (it could point anywhere) but retried at the same address. Only an address the rules refuse
 * (`destination.ts`) fails at once, untried; any delivery can be replayed from the dashboard.
 */
import type { WebhookEndpoint } from "../../kv/webhooks.ts";
import { setWebhookDelivery, type WebhookDelivery } from "../../kv/webhook_deliveries.ts";
import { log, type LogFields } from "../../core/log.ts";
import { feedEntryOf, type RecordedEvent } from "../../core/events.ts";
import { type PostOutcome, postWebhook } from "./http_post.ts";
import type { WebhookContext } from "./runtime.ts";
import { signatureHeaders, webhookMessageId } from "./signature.ts";
import { signingSecrets } from "./secrets.ts";

/** What an attempt comes to. */
export type Verdict = "delivered" | "retry" | "failed";

/** How one attempt ended. */
export interface AttemptResult {
  verdict: Verdict;
  /** HTTP status of the answer; null when nothing answered. */
  responseStatus: number | null;
  /** What went wrong, for people; null when delivered. */
  error: string | null;
  /** The start of the answer's body; null when nothing answered. */
  answer: string | null;
  durationMs: number;
}

/** Signs and POSTs `event` to `endpoint` once; never throws. */
export async function attemptDelivery(
  ctx: WebhookContext,
  input: { endpoint: WebhookEndpoint; event: RecordedEvent },
): Promise<AttemptResult> {
  const { endpoint, event } = input;
  const started = performance.now();
  const now = ctx.clock.now();
  const secrets = await signingSecrets(ctx.keys, endpoint, now);
  if (!secrets) {
    return {
      verdict: "failed",
      responseStatus: null,
      error: "The signing secret cannot be decrypted",
      answer: null,
      durationMs: 0,
    };
  }
  const body = JSON.stringify(feedEntryOf(event));
  const headers = signatureHeaders({
    messageId: webhookMessageId(endpoint.projectId, event.id),
    timestamp: Math.floor(now / 1000),
    body,
    secrets,
  });
  const outcome = await postWebhook({ url: endpoint.url, headers, body }, {
    resolve: ctx.webhooks.resolve,
    caCerts: ctx.webhooks.caCerts,
    timeoutMs: ctx.webhooks.attemptTimeoutMs,
    allowLoopback: ctx.config.webhooksAllowLoopback,
  });
  const durationMs = Math.round(performance.now() - started);
  return { ...judge(outcome, ctx.webhooks.attemptTimeoutMs), durationMs };
}

// The verdict on an outcome, with its status, message and answer.
function judge(outcome: PostOutcome, timeoutMs: number): Omit<AttemptResult, "durationMs"> {
  switch (outcome.kind) {
    case "answered": {
      const { status, answer } = outcome;
      if (status >= 200 && status < 300) {
        return { verdict: "delivered", responseStatus: status, error: null, answer };
      }
      const error = status >= 300 && status < 400
        ? `HTTP ${status}: redirects are not followed`
        : `HTTP ${status}`;
      return { verdict: "retry", responseStatus: status, error, answer };
    }
    case "refused":
      return { verdict: "failed", responseStatus: null, error: outcome.reason, answer: null };
    case "timeout":
      return {
        verdict: "retry",
        responseStatus: null,
        error: `No answer within ${timeoutMs / 1000} s`,
        answer: null,
      };
    case "network":
      return { verdict: "retry", responseStatus: null, error: outcome.error, answer: null };
  }
}

/**
 * Adds a delivery's state after an attempt to `op` (its log entry) and writes the attempt's JSON
 * log line: project, endpoint, event type and id, HTTP status, outcome.
 */
export function recordAttempt(
  op: Deno.AtomicOperation,
  projectId: string,
  input: { delivery: WebhookDelivery; fields: LogFields },
): void {
  const { delivery } = input;
  setWebhookDelivery(op, projectId, delivery);
  log(delivery.status === "delivered" ? "info" : "warn", "Webhook delivery attempt", {
    projectId,
    ...input.fields,
    endpointId: delivery.endpointId,
    deliveryId: delivery.id,
    trigger: delivery.trigger,
    eventType: delivery.eventType,
    eventId: delivery.eventId,
    attempt: delivery.attempts,
    status: delivery.responseStatus,
    outcome: delivery.status,
    error: delivery.error,
    durationMs: delivery.durationMs,
  });
}

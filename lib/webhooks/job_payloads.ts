/**
 * The job kinds of webhooks, in the `webhooks` lane (zod and their adder only, so the event
 * pipeline can add them in its commits; the handlers are in `jobs.ts`).
 */
import { z } from "zod";
import { jobAdder, payloadIdSchema } from "../job_handler.ts";

/** A feed id, as a decimal string. */
const eventIdSchema = z.string().regex(/^[1-9][0-9]*$/);

/** Delivers one event of the feed to one endpoint, with its own retries for 24 hours. */
export const webhookDeliverJobSchema = z.object({
  type: z.literal("webhook_deliver"),
  projectId: payloadIdSchema,
  endpointId: payloadIdSchema,
  eventId: eventIdSchema,
  /** The delivery's entry in the log (`kv/webhook_deliveries.ts`). */
  deliveryId: payloadIdSchema,
  trigger: z.enum(["event", "replay"]),
  /** When the delivery was queued: it is given up 24 hours later. */
  queuedAt: z.number().int(),
});

/**
 * Turns the events of one commit, positions `after + 1` to `last`, into one `webhook_deliver` job
 * each for one endpoint, 50 per run (a commit of many events to several endpoints stays within
 * KV's commit limits).
 */
export const webhookFanOutJobSchema = z.object({
  type: z.literal("webhook_fan_out"),
  projectId: payloadIdSchema,
  endpointId: payloadIdSchema,
  after: z.number().int().nonnegative(),
  last: z.number().int().positive(),
  queuedAt: z.number().int(),
});

/** A `webhook_deliver` job's payload. */
export type WebhookDeliverJob = z.infer<typeof webhookDeliverJobSchema>;
/** A `webhook_fan_out` job's payload. */
export type WebhookFanOutJob = z.infer<typeof webhookFanOutJobSchema>;

const webhookJobSchema = z.discriminatedUnion("type", [
  webhookDeliverJobSchema,
  webhookFanOutJobSchema,
]);

/** Validates a webhook job and adds it, in the `webhooks` lane, to the caller's atomic operation. */
export const addWebhookJob = jobAdder(webhookJobSchema, "webhooks");

/** The handlers of the webhook job kinds (`job_payloads.ts`): deliveries and their fan-out. */
import { runWebhookDelivery, runWebhookFanOut } from "./deliver.ts";

/** Handlers of `webhook_deliver` and `webhook_fan_out`. */
export const webhookJobHandlers = {
  webhook_deliver: runWebhookDelivery,
  webhook_fan_out: runWebhookFanOut,
};

/**
 * The changes the dashboard makes to a project's webhooks, for the audit log: who did what to
 * which endpoint. Each is one JSON log line once its commit landed. When the project's audit log
 * exists, its entry belongs in the change's own commit: each caller marks that commit `AUDIT:`.
 */
import { log } from "../../core/log.ts";

/** A change to a project's webhooks. */
export interface WebhookChange {
  action:
    | "webhook_endpoint_added"
    | "webhook_endpoint_removed"
    | "webhook_secret_rotated"
    | "webhook_delivery_replayed";
  projectId: string;
  /** The developer's wallet address. */
  actor: string;
  endpointId: string;
  url: string;
  /** The replayed delivery and the new one. */
  deliveryId?: string;
  replayOf?: string;
  /** A rotation that stopped the secret before at once. */
  droppedPrevious?: boolean;
}

const MESSAGES: Record<WebhookChange["action"], string> = {
  webhook_endpoint_added: "Webhook endpoint added",
  webhook_endpoint_removed: "Webhook endpoint removed",
  webhook_secret_rotated: "Webhook secret rotated",
  webhook_delivery_replayed: "Webhook delivery replayed",
};

/** Records a change that committed (never a secret). */
export function noteWebhookChange(change: WebhookChange): void {
  log("info", MESSAGES[change.action], { ...change });
}

/**
 * The changes the dashboard makes to a project's webhooks, for the audit log: who did what to
 * which endpoint. Each is an audit entry added to the change's own commit (`webhookAudit`, then
 * `addAuditEntry`), and one JSON log line once that commit landed. Never a secret.
 */
import { log } from "../../core/log.ts";
import type { AuditInput } from "../../kv/audit_log.ts";

/** A change to a project's webhooks. */
export interface WebhookChange {
  action:
    | "webhook_endpoint_added"
    | "webhook_endpoint_removed"
    | "webhook_secret_rotated"
    | "webhook_test_sent"
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
  webhook_test_sent: "Webhook test sent",
  webhook_delivery_replayed: "Webhook delivery replayed",
};

/** The audit log's entry of a change made at `at`, for the change's own commit. */
export function webhookAudit(change: WebhookChange, at: number): AuditInput {
  const { action, projectId, actor, ...details } = change;
  return { projectId, actor, action, details, at };
}

/** Logs a change that committed (never a secret). */
export function noteWebhookChange(change: WebhookChange): void {
  log("info", MESSAGES[change.action], { ...change });
}

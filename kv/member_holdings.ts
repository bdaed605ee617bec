/**
 * What a member made in a project and holds only while their role allows it (the rule is
 * `lib/auth/roles.ts`'s): active API keys, webhook endpoints and the pending invitations they
 * sent. A team change that removes or demotes the member withdraws some of them in its own commit
 * (`team.ts`), each with its audit entry. A record made before makers were recorded names none: it
 * is nobody's, never guessed.
 */
import { addAuditEntry, type AuditInput } from "./audit_log.ts";
import {
  type ActiveApiKeys,
  addApiKeyRevocations,
  type ApiKeyRecord,
  readActiveApiKeys,
} from "./api_keys.ts";
import { type Invitation, invitationIndexKey, invitationKey } from "./invitations.ts";
import {
  addWebhookEndpointRemovals,
  readWebhookEndpoints,
  type WebhookEndpoint,
  type WebhookEndpointsRead,
} from "./webhooks.ts";

/** One thing a member made. */
export type Holding =
  | { kind: "key"; key: ApiKeyRecord }
  | { kind: "endpoint"; endpoint: WebhookEndpoint }
  | { kind: "invitation"; invitation: Invitation };

/** A project's keys, endpoints and invitations as one change reads them, with what it checks. */
export interface HoldingsRead {
  keys: ActiveApiKeys;
  endpoints: WebhookEndpointsRead;
  invitations: Invitation[];
}

/** Reads the project's active keys and endpoints beside its pending `invitations`. */
export async function readHoldings(
  kv: Deno.Kv,
  projectId: string,
  invitations: Invitation[],
): Promise<HoldingsRead> {
  const [keys, endpoints] = await Promise.all([
    readActiveApiKeys(kv, projectId),
    readWebhookEndpoints(kv, projectId),
  ]);
  return { keys, endpoints, invitations };
}

/** What `address` made, of what was read: keys, then endpoints, then invitations. */
export function holdingsOf(read: HoldingsRead, address: string): Holding[] {
  return [
    ...read.keys.keys.filter((key) => key.createdBy === address)
      .map((key) => ({ kind: "key" as const, key })),
    ...read.endpoints.endpoints.filter((endpoint) => endpoint.createdBy === address)
      .map((endpoint) => ({ kind: "endpoint" as const, endpoint })),
    ...read.invitations.filter((invitation) => invitation.invitedBy === address)
      .map((invitation) => ({ kind: "invitation" as const, invitation })),
  ];
}

/**
 * Adds to `op` the withdrawal of `withdrawn` (holdings of `read`), checked on what they were read
 * with, and an audit entry for each by `audit.actor`, naming the member they were made by.
 */
export function addWithdrawals(
  op: Deno.AtomicOperation,
  read: HoldingsRead,
  withdrawn: readonly Holding[],
  audit: { projectId: string; actor: string; at: number; madeBy: string },
): void {
  const { projectId, actor, at, madeBy } = audit;
  const entry = (action: AuditInput["action"], details: Record<string, unknown>) =>
    addAuditEntry(op, { projectId, actor, at, action, details: { ...details, madeBy } });
  const keys = withdrawn.flatMap((h) => h.kind === "key" ? [h.key] : []);
  addApiKeyRevocations(op, read.keys, keys, at);
  for (const key of keys) entry("key_revoked", { keyId: key.id, preview: key.preview });
  const endpoints = withdrawn.flatMap((h) => h.kind === "endpoint" ? [h.endpoint] : []);
  addWebhookEndpointRemovals(op, read.endpoints, endpoints);
  for (const endpoint of endpoints) {
    entry("webhook_endpoint_removed", { endpointId: endpoint.id, url: endpoint.url });
  }
  // The invitations were read with the team, whose stamp the change checks.
  for (const h of withdrawn) {
    if (h.kind !== "invitation") continue;
    const { address, role } = h.invitation;
    op.delete(invitationKey(projectId, address)).delete(invitationIndexKey(address, projectId));
    entry("invitation_revoked", { address, role });
  }
}

/**
 * What a member made in a project and holds only while their role allows it (the rule is
 * `lib/auth/roles.ts`'s): active API keys, webhook endpoints and the pending invitations they
 * sent. A team change that removes or demotes the member withdraws some of them in its own commit
 * (`member_changes.ts`), each with its audit entry. A record made before makers were recorded names none: it
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
 * Plans the withdrawal of what `address` made that `withdraws` picks, read now beside the team's
 * pending `invitations`: `write` adds it to the change's commit, checked on what it was read with,
 * with an audit entry each by the change's actor, naming the member it was made by.
 */
export async function planWithdrawal(
  kv: Deno.Kv,
  input: {
    address: string;
    audit: AuditInput;
    invitations: Invitation[];
    withdraws: (holding: Holding) => boolean;
  },
): Promise<{ withdrawn: Holding[]; write(op: Deno.AtomicOperation): void }> {
  const { projectId, actor, at } = input.audit;
  const read = await readHoldings(kv, projectId, input.invitations);
  const withdrawn = holdingsOf(read, input.address).filter(input.withdraws);
  const audit = { projectId, actor, at, madeBy: input.address };
  return { withdrawn, write: (op) => addWithdrawals(op, read, withdrawn, audit) };
}

// The withdrawal's writes; keys and endpoints are checked on the entries they were read after.
function addWithdrawals(
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

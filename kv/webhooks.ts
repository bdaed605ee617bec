/**
 * Webhook endpoints: per project, up to 5 URLs that receive every event of its feed, each with its
 * signing secret (sealed under SECRET).
 *
 * `["webhook_targets", projectId]` lists the project's endpoint ids. Every commit that records
 * events reads it and checks it (`lib/webhooks/fan_out.ts`), and every change of the endpoints
 * checks and rewrites it, so an endpoint gets exactly the events committed after the commit that
 * added it, and none after the one that removed it, whatever the instances racing.
 */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";
import { addAuditEntry, type AuditInput } from "./audit_log.ts";
import { wasWrittenBy } from "./lost_answer.ts";
import { getMemberEntryUnder, type MemberRule } from "./members.ts";
import { guardSealedWrite } from "./secret_check.ts";

/** Most endpoints a project may have. */
export const MAX_WEBHOOK_ENDPOINTS = 5;

/** A webhook endpoint as stored. */
export interface WebhookEndpoint {
  id: string;
  projectId: string;
  url: string;
  createdAt: number;
  /** The signing secret (`whsec_...`), sealed as a `webhook_secret` of the project. */
  secretEnc: string;
  /** During a rotation's overlap: the secret before, sealed the same way, signing too until `until`. */
  previous: { secretEnc: string; until: number } | null;
  /** When the secret was last rotated (null: never). */
  rotatedAt: number | null;
  /** The wallet address of the member who added it; absent on endpoints added before makers were recorded. */
  createdBy?: string;
}

/** Key of the project's list of endpoint ids (checked by every commit that records events). */
export function webhookTargetsKey(projectId: string): Deno.KvKey {
  return ["webhook_targets", projectId];
}
/** Key of an endpoint. */
/** Key of an endpoint record. */
export function webhookEndpointKey(projectId: string, id: string): Deno.KvKey {
  return ["webhook_endpoints", projectId, id];
}

/** Reads the project's endpoint ids, to be checked by the commit that records events. */
export function getWebhookTargetsEntry(
  kv: Deno.Kv,
  projectId: string,
): Promise<Deno.KvEntryMaybe<string[]>> {
  return kv.get<string[]>(webhookTargetsKey(projectId));
}

/** Why `createWebhookEndpoint` refused. */
export class WebhookEndpointConflictError extends Error {
  constructor(readonly reason: "limit" | "duplicate") {
    super(`Cannot add webhook endpoint: ${reason}`);
  }
}

/**
 * Stores a new endpoint (its secret sealed under the SECRET of key id `sealedUnder`) and adds it
 * to the project's targets, within `MAX_WEBHOOK_ENDPOINTS` and one endpoint per URL; throws
 * `WebhookEndpointConflictError` otherwise. Its maker's entry (`createdBy`) must pass
 * `makerRule`, checked by the commit.
 */
export async function createWebhookEndpoint(
  kv: Deno.Kv,
  endpoint: WebhookEndpoint & { createdBy: string },
  options: { sealedUnder: string; makerRule: MemberRule; audit?: AuditInput | undefined },
): Promise<WebhookEndpoint> {
  const { projectId, id } = endpoint;
  const maker = { address: endpoint.createdBy, rule: options.makerRule };
  return await commitWithRetry("add webhook endpoint", async () => {
    const [targets, makerEntry] = await Promise.all([
      getWebhookTargetsEntry(kv, projectId),
      getMemberEntryUnder(kv, projectId, maker),
    ]);
    const ids = targets.value ?? [];
    if (ids.length >= MAX_WEBHOOK_ENDPOINTS) throw new WebhookEndpointConflictError("limit");
    const existing = await listWebhookEndpoints(kv, projectId);
    if (existing.some((e) => e.url === endpoint.url)) {
      throw new WebhookEndpointConflictError("duplicate");
    }
    const op = kv.atomic()
      .check(targets, makerEntry)
      .check({ key: webhookEndpointKey(projectId, id), versionstamp: null })
      .set(webhookEndpointKey(projectId, id), endpoint)
      .set(webhookTargetsKey(projectId), [...ids, id]);
    if (options.audit) addAuditEntry(op, options.audit);
    await guardSealedWrite(kv, op, options.sealedUnder);
    if ((await op.commit()).ok || await wasWrittenBy(kv, webhookEndpointKey(projectId, id))) {
      return endpoint;
    }
    return RETRY;
  }, { rounds: 10 });
}

/** Returns an endpoint entry (versionstamp null when absent). */
export function getWebhookEndpointEntry(
  kv: Deno.Kv,
  projectId: string,
  id: string,
): Promise<Deno.KvEntryMaybe<WebhookEndpoint>> {
  return kv.get<WebhookEndpoint>(webhookEndpointKey(projectId, id));
}

/** Lists a project's endpoint entries, oldest first. */
export async function listWebhookEndpointEntries(
  kv: Deno.Kv,
  projectId: string,
): Promise<Deno.KvEntry<WebhookEndpoint>[]> {
  return await Array.fromAsync(
    kv.list<WebhookEndpoint>({ prefix: ["webhook_endpoints", projectId] }),
  );
}

/** Lists a project's endpoints, oldest first. */
export async function listWebhookEndpoints(
  kv: Deno.Kv,
  projectId: string,
): Promise<WebhookEndpoint[]> {
  return (await listWebhookEndpointEntries(kv, projectId)).map((entry) => entry.value);
}

/** Iterates over every endpoint entry of every project (for re-sealing). */
export function listAllWebhookEndpointEntries(
  kv: Deno.Kv,
): Deno.KvListIterator<WebhookEndpoint> {
  return kv.list<WebhookEndpoint>({ prefix: ["webhook_endpoints"] });
}

/**
 * Removes an endpoint and takes it out of the project's targets, so events committed from now on
 * do not go to it, with the audit entry `audit` makes of it; returns it, or null when absent.
 */
export async function deleteWebhookEndpoint(
  kv: Deno.Kv,
  projectId: string,
  id: string,
  options: { audit?: (removed: WebhookEndpoint) => AuditInput } = {},
): Promise<WebhookEndpoint | null> {
  return await commitWithRetry("remove webhook endpoint", async () => {
    const [entry, targets] = await Promise.all([
      getWebhookEndpointEntry(kv, projectId, id),
      getWebhookTargetsEntry(kv, projectId),
    ]);
    if (!entry.value) return null;
    const op = kv.atomic().check(entry, targets).delete(entry.key);
    setTargets(op, projectId, (targets.value ?? []).filter((target) => target !== id));
    if (options.audit) addAuditEntry(op, options.audit(entry.value));
    if ((await op.commit()).ok || !await wasWrittenBy(kv, entry.key)) return entry.value;
    return RETRY;
  }, { rounds: 10 });
}

/** A project's endpoints, read after the targets they are checked on. */
export interface WebhookEndpointsRead {
  targets: Deno.KvEntryMaybe<string[]>;
  endpoints: WebhookEndpoint[];
}

/**
 * Reads a project's endpoints for a commit that may remove some: the targets first, which every
 * addition and removal moves, so checking them covers every endpoint listed after.
 */
export async function readWebhookEndpoints(
  kv: Deno.Kv,
  projectId: string,
): Promise<WebhookEndpointsRead> {
  const targets = await getWebhookTargetsEntry(kv, projectId);
  return { targets, endpoints: await listWebhookEndpoints(kv, projectId) };
}

/**
 * Adds to `op` the removal of `removed` (some of `read.endpoints`) from the project and its
 * targets, checked on `read.targets`: as `deleteWebhookEndpoint` does one by one.
 */
export function addWebhookEndpointRemovals(
  op: Deno.AtomicOperation,
  read: WebhookEndpointsRead,
  removed: readonly WebhookEndpoint[],
): void {
  if (removed.length === 0) return;
  const { projectId } = removed[0]!;
  const gone = new Set(removed.map((endpoint) => endpoint.id));
  op.check(read.targets);
  for (const endpoint of removed) op.delete(webhookEndpointKey(projectId, endpoint.id));
  setTargets(op, projectId, (read.targets.value ?? []).filter((id) => !gone.has(id)));
}

// The project's targets after a removal: the entry goes with the last endpoint.
function setTargets(op: Deno.AtomicOperation, projectId: string, ids: string[]): void {
  if (ids.length > 0) op.set(webhookTargetsKey(projectId), ids);
  else op.delete(webhookTargetsKey(projectId));
}

/**
 * Replaces an endpoint's sealed secrets (a rotation, with its audit entry, or re-sealing under a
 * new SECRET) if the endpoint did not change since `entry` was read; false when it did (or is gone).
 */
export async function updateWebhookEndpointSecrets(
  kv: Deno.Kv,
  entry: Deno.KvEntry<WebhookEndpoint>,
  next: Pick<WebhookEndpoint, "secretEnc" | "previous" | "rotatedAt"> & {
    sealedUnder: string;
    audit?: AuditInput | undefined;
  },
): Promise<boolean> {
  const { sealedUnder, audit, ...secrets } = next;
  const op = kv.atomic().check(entry).set(entry.key, { ...entry.value, ...secrets });
  if (audit) addAuditEntry(op, audit);
  await guardSealedWrite(kv, op, sealedUnder);
  return (await op.commit()).ok ||
    await wasWrittenBy<WebhookEndpoint>(kv, entry.key, (v) => v.secretEnc === secrets.secretEnc);
}

/**
 * The tokens of a game connected through Roblox OAuth (`RobloxConnection` in `projects.ts`), and
 * the lease that lets one refresh run at a time across instances.
 *
 * A refresh token works once and rotates, and one presented twice ends the grant, so a refresh
 * is: take the lease (a create checked on the tokens as read), refresh, then commit the new pair
 * checked on those tokens and that lease, deleting the lease. Only the lease holder spends the
 * refresh token, and the new pair is stored before anyone uses it. A lease outlives any refresh
 * (`expiresAt`, re-checked on read), so one whose holder died is taken over.
 */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";
import { addAuditEntry, type AuditInput } from "./audit_log.ts";
import { type Project, projectKey } from "./projects.ts";
import { guardSealedWrite } from "./secret_check.ts";

/** The tokens of one grant, both sealed. */
export interface RobloxTokens {
  grantId: string;
  accessTokenEnc: string;
  accessExpiresAt: number;
  refreshTokenEnc: string;
  refreshExpiresAt: number;
  refreshedAt: number;
}

/** Who refreshes now, until when. */
interface RefreshLease {
  holder: string;
  expiresAt: number;
}

/** Key of a project's tokens. */
export function robloxTokensKey(projectId: string): Deno.KvKey {
  return ["roblox_tokens", projectId];
}

function leaseKey(projectId: string): Deno.KvKey {
  return ["roblox_token_leases", projectId];
}

/** The project's tokens entry (value null when not connected or the grant was lost). */
export function getRobloxTokensEntry(
  kv: Deno.Kv,
  projectId: string,
): Promise<Deno.KvEntryMaybe<RobloxTokens>> {
  return kv.get<RobloxTokens>(robloxTokensKey(projectId));
}

/**
 * Takes the refresh lease for `holder` if it is free (or its holder's time is up) and the tokens
 * are still `tokens`; answers the lease's entry to commit against, or null when another holds it
 * or the tokens changed.
 */
export async function takeRefreshLease(
  kv: Deno.Kv,
  tokens: Deno.KvEntry<RobloxTokens>,
  lease: { holder: string; now: number; ttlMs: number },
): Promise<Deno.KvEntry<RefreshLease> | null> {
  const projectId = tokens.key[1] as string;
  const current = await kv.get<RefreshLease>(leaseKey(projectId));
  if (current.value && current.value.expiresAt > lease.now) return null;
  const value = { holder: lease.holder, expiresAt: lease.now + lease.ttlMs };
  const result = await kv.atomic().check(tokens, current)
    .set(leaseKey(projectId), value, { expireIn: lease.ttlMs }).commit();
  return result.ok ? { key: leaseKey(projectId), value, versionstamp: result.versionstamp } : null;
}

/** When the current lease ends (null: none), for instances waiting on another's refresh. */
export async function refreshLeaseEnd(kv: Deno.Kv, projectId: string): Promise<number | null> {
  return (await kv.get<RefreshLease>(leaseKey(projectId))).value?.expiresAt ?? null;
}

/**
 * Stores the refreshed pair and ends the lease, checked on the tokens and the lease as taken;
 * false when either changed (the grant was replaced or ended meanwhile).
 */
export async function commitRefreshedTokens(
  kv: Deno.Kv,
  held: { tokens: Deno.KvEntry<RobloxTokens>; lease: Deno.KvEntry<RefreshLease> },
  next: RobloxTokens,
  sealedUnder: string,
): Promise<boolean> {
  const op = kv.atomic().check(held.tokens, held.lease)
    .set(held.tokens.key, next)
    .delete(held.lease.key);
  await guardSealedWrite(kv, op, sealedUnder);
  return (await op.commit()).ok;
}

/** Ends a lease whose refresh failed without spending the token (a network error, a 5xx). */
export async function releaseRefreshLease(
  kv: Deno.Kv,
  lease: Deno.KvEntry<RefreshLease>,
): Promise<void> {
  await kv.atomic().check(lease).delete(lease.key).commit();
}

/**
 * Changes the project's connection and its tokens in one commit: `tokens` replaces them (null
 * deletes them, undefined keeps them). `change` answers the project to write, or null to write
 * nothing; `audit` is recorded with it. Answers the project written, or null (none, or no change).
 */
export async function updateRobloxConnection(
  kv: Deno.Kv,
  projectId: string,
  change: (project: Project) => Project | null,
  options: {
    tokens?: RobloxTokens | null;
    /** Only while the stored tokens are still these (a refresh or a reconnect did not replace them). */
    ifTokens?: Deno.KvEntryMaybe<RobloxTokens>;
    audit?: ((project: Project) => AuditInput) | undefined;
    sealedUnder?: string | undefined;
    /** Adds the change's other effects (a job) to its commit. */
    beforeCommit?: ((op: Deno.AtomicOperation) => void) | undefined;
  } = {},
): Promise<Project | null> {
  return await commitWithRetry("update the Roblox connection", async () => {
    const entry = await kv.get<Project>(projectKey(projectId));
    if (!entry.value) return null;
    const next = change(entry.value);
    if (!next) return null;
    const op = kv.atomic().check(entry).set(entry.key, next);
    if (options.ifTokens) op.check(options.ifTokens);
    if (options.tokens === null) op.delete(robloxTokensKey(projectId));
    else if (options.tokens) op.set(robloxTokensKey(projectId), options.tokens);
    if (options.audit) addAuditEntry(op, options.audit(next));
    options.beforeCommit?.(op);
    if (options.sealedUnder) await guardSealedWrite(kv, op, options.sealedUnder);
    if ((await op.commit()).ok) return next;
    // Tokens replaced meanwhile: this change was about the ones read, so it no longer applies.
    if (options.ifTokens) {
      const now = await kv.get(robloxTokensKey(projectId));
      if (now.versionstamp !== options.ifTokens.versionstamp) return null;
    }
    return RETRY;
  });
}

/** Every project's tokens entry (for re-sealing during a SECRET rotation). */
export function listRobloxTokensEntries(kv: Deno.Kv): Deno.KvListIterator<RobloxTokens> {
  return kv.list<RobloxTokens>({ prefix: ["roblox_tokens"] });
}

/**
 * Puts `next` in place of the sealed token `sealed`, checked on the entry as read: true when
 * replaced, else what the store holds there now (null: nothing), to look at again.
 */
export async function replaceSealedRobloxToken(
  kv: Deno.Kv,
  projectId: string,
  replace: { sealed: string; next: string; sealedUnder: string },
): Promise<true | string | null> {
  const entry = await getRobloxTokensEntry(kv, projectId);
  if (!entry.value) return null;
  const field = entry.value.accessTokenEnc === replace.sealed
    ? "accessTokenEnc"
    : entry.value.refreshTokenEnc === replace.sealed
    ? "refreshTokenEnc"
    : null;
  if (!field) return null;
  const op = kv.atomic().check(entry).set(entry.key, { ...entry.value, [field]: replace.next });
  await guardSealedWrite(kv, op, replace.sealedUnder);
  return (await op.commit()).ok ? true : replace.sealed;
}

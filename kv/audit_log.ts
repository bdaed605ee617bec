/**
 * The audit log: who did what to a project from the dashboard, and when. An entry is added to the
 * atomic operation that makes the change it records (`addAuditEntry`), so the log shows every
 * change that happened and none that did not. Entries are kept one year (`expireIn`, which is only
 * the earliest deletion, and `expiresAt`, re-checked on read). They say that a secret changed,
 * never its value: callers put names, ids, addresses and amounts in `details`, nothing sealed.
 */
import { ulidFloor, ulidSequence } from "../core/ids.ts";

/** Every action the log records, by what happened. */
export const AUDIT_ACTIONS = [
  "signed_in",
  "project_created",
  "project_deleted",
  "key_created",
  "key_revoked",
  "wallet_created",
  "settings_saved",
  "policy_saved",
  "watch_added",
  "watch_removed",
  "ping_sent",
  "member_invited",
  "invitation_revoked",
  "invitation_accepted",
  "invitation_declined",
  "member_role_changed",
  "member_removed",
  "member_left",
  "ownership_transferred",
  "withdrawal_requested",
  "key_exported",
  "webhook_endpoint_added",
  "webhook_endpoint_removed",
  "webhook_secret_rotated",
  "webhook_test_sent",
  "webhook_delivery_replayed",
  "roblox_connected",
  "roblox_universe_chosen",
  "roblox_disconnected",
  "roblox_connection_lost",
  "game_key_installed",
  "servers_restarted",
  "game_key_retired",
] as const;
/** An action the log records. */
export type AuditAction = typeof AUDIT_ACTIONS[number];

/** What the caller says about a change. */
export interface AuditInput {
  projectId: string;
  /** The wallet address of the signed-in developer who made the change. */
  actor: string;
  action: AuditAction;
  /** JSON-safe facts of the change (ids, names, before and after); never a secret's value. */
  details?: Record<string, unknown>;
  at: number;
}

/** An entry as stored. */
export interface AuditEntry extends Required<AuditInput> {
  /** A ULID of `at`: entries list in time order (in the order made, within a millisecond). */
  id: string;
  expiresAt: number;
}

/** How long an entry is kept: one year. */
export const AUDIT_KEPT_MS = 365 * 24 * 3_600_000;

function auditKey(projectId: string, id: string): Deno.KvKey {
  return ["audit_log", projectId, id];
}

// The entries' ids: those one process makes in one millisecond of the clock keep their order.
const auditIds = ulidSequence();

/** Adds to `op` the entry recording `input`; commit `op` to record it together with its change. */
export function addAuditEntry(op: Deno.AtomicOperation, input: AuditInput): AuditEntry {
  const entry: AuditEntry = {
    details: {},
    ...input,
    id: auditIds(input.at),
    expiresAt: input.at + AUDIT_KEPT_MS,
  };
  op.set(auditKey(input.projectId, entry.id), entry, { expireIn: AUDIT_KEPT_MS });
  return entry;
}

/** Which entries a listing returns: all by default. */
export interface AuditFilter {
  action?: AuditAction | undefined;
  actor?: string | undefined;
  /** Unix ms, inclusive. */
  from?: number | undefined;
  /** Unix ms, exclusive. */
  to?: number | undefined;
  /** An entry id from an earlier page: only older entries. */
  before?: string | undefined;
}

/**
 * Yields a project's entries newest first, those matching `filter` and not expired at `now`. The
 * time bounds and the cursor narrow the store listing itself; action and actor are matched on read.
 */
export async function* listAuditEntries(
  kv: Deno.Kv,
  projectId: string,
  options: AuditFilter & { now: number },
): AsyncGenerator<AuditEntry> {
  const prefix = ["audit_log", projectId];
  const start = options.from === undefined ? prefix : [...prefix, ulidFloor(options.from)];
  let end: Deno.KvKey = options.to === undefined
    ? [...prefix, "\uffff"]
    : [...prefix, ulidFloor(options.to)];
  if (options.before !== undefined && options.before < String(end[2])) {
    end = [...prefix, options.before];
  }
  const iter = kv.list<AuditEntry>(
    { start: start.length === 2 ? [...prefix, ""] : start, end },
    { reverse: true, batchSize: 100 },
  );
  for await (const { value } of iter) {
    if (value.expiresAt <= options.now) continue;
    if (options.action !== undefined && value.action !== options.action) continue;
    if (options.actor !== undefined && value.actor !== options.actor) continue;
    yield value;
  }
}

/** One page of entries, and the cursor (`before`) of the next; null when none are left. */
export async function listAuditPage(
  kv: Deno.Kv,
  projectId: string,
  options: AuditFilter & { now: number; limit: number },
): Promise<{ entries: AuditEntry[]; next: string | null }> {
  const entries: AuditEntry[] = [];
  for await (const entry of listAuditEntries(kv, projectId, options)) {
    if (entries.length === options.limit) return { entries, next: entries.at(-1)!.id };
    entries.push(entry);
  }
  return { entries, next: null };
}

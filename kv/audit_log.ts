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
  "reward_cancelled",
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

// The store listing of a project's entries newest first, narrowed by the time bounds and the
// cursor; `batchSize` entries a round trip.
function listAuditRange(
  kv: Deno.Kv,
  projectId: string,
  filter: AuditFilter,
  batchSize: number,
): Deno.KvListIterator<AuditEntry> {
  const prefix = ["audit_log", projectId];
  const start = filter.from === undefined ? [...prefix, ""] : [...prefix, ulidFloor(filter.from)];
  let end: Deno.KvKey = filter.to === undefined
    ? [...prefix, "\uffff"]
    : [...prefix, ulidFloor(filter.to)];
  if (filter.before !== undefined && filter.before < String(end[2])) {
    end = [...prefix, filter.before];
  }
  return kv.list<AuditEntry>({ start, end }, { reverse: true, batchSize });
}

// True when the entry is kept at `now` and has the filter's action and actor.
function matchesFilter(entry: AuditEntry, filter: AuditFilter, now: number): boolean {
  return entry.expiresAt > now &&
    (filter.action === undefined || entry.action === filter.action) &&
    (filter.actor === undefined || entry.actor === filter.actor);
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
  for await (const { value } of listAuditRange(kv, projectId, options, 100)) {
    if (matchesFilter(value, options, options.now)) yield value;
  }
}

/** One page of entries: up to `limit` matching ones, newest first. */
export interface AuditPage {
  entries: AuditEntry[];
  /** The cursor (`before`) to read on from; null when no older entry is left. */
  next: string | null;
  /**
   * True when the page stopped at `maxExamined` entries looked at, before it was full: entries
   * older than `next` were not searched yet (there may be none that match).
   */
  searchedPart: boolean;
}

/**
 * One page of a project's entries matching `filter`, looking at no more than `maxExamined` entries
 * of the store (a filter matching few entries of a long log answers in bounded time, and says
 * where to continue).
 */
export async function listAuditPage(
  kv: Deno.Kv,
  projectId: string,
  options: AuditFilter & { now: number; limit: number; maxExamined: number },
): Promise<AuditPage> {
  const entries: AuditEntry[] = [];
  let examined = 0;
  // A full page with no filter takes one round trip: its entries, and one that says more are left.
  const batchSize = Math.min(options.limit + 1, options.maxExamined);
  for await (const { value } of listAuditRange(kv, projectId, options, batchSize)) {
    if (matchesFilter(value, options, options.now)) {
      if (entries.length === options.limit) {
        return { entries, next: entries.at(-1)!.id, searchedPart: false };
      }
      entries.push(value);
    }
    if (++examined >= options.maxExamined) return { entries, next: value.id, searchedPart: true };
  }
  return { entries, next: null, searchedPart: false };
}

/** The id of the project's newest entry, or null when its log is empty. */
export async function getLatestAuditId(kv: Deno.Kv, projectId: string): Promise<string | null> {
  const iter = kv.list<AuditEntry>({ prefix: ["audit_log", projectId] }, {
    reverse: true,
    limit: 1,
  });
  for await (const entry of iter) return entry.value.id;
  return null;
}

/** True when the project's log has an entry of `actor` newer than the entry `after` (or any). */
export async function hasAuditEntryAfter(
  kv: Deno.Kv,
  projectId: string,
  input: { actor: string; after: string | null },
): Promise<boolean> {
  const prefix = ["audit_log", projectId];
  // `after` and a NUL is the first key past `after`: the listing starts just after it.
  const start = input.after === null ? [...prefix, ""] : [...prefix, `${input.after}\0`];
  const iter = kv.list<AuditEntry>({ start, end: [...prefix, "\uffff"] }, { batchSize: 10 });
  for await (const { value } of iter) if (value.actor === input.actor) return true;
  return false;
}

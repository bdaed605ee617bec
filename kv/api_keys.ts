/**
 * API keys: only SHA-256 hashes are stored; the plaintext exists once, in the creation answer. A
 * revoked key's hash is deleted at once (nothing may find it again), and its record, kept for the
 * dashboard's list, 30 days later (`expireIn`, and re-checked on read from `revokedAt`).
 */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";
import { sha256Hex } from "../core/hash.ts";
import { randomToken, ulid } from "../core/ids.ts";
import { wasWrittenBy } from "./lost_answer.ts";
import type { KvReader } from "./read_batches.ts";
import { addAuditEntry, type AuditInput } from "./audit_log.ts";
import { getMemberEntryUnder, type MemberRule } from "./members.ts";

/**
 * What a key may call: `read` (the reads, players, the event feed, a transaction's status and the
 * list) and `pay` (the transaction routes).
 */
export const API_KEY_SCOPES = ["read", "pay"] as const;
/** One scope of a key. */
export type ApiKeyScope = typeof API_KEY_SCOPES[number];

/** An API key as stored (no plaintext). */
export interface ApiKeyRecord {
  id: string;
  projectId: string;
  /** The first characters of the key, for recognising it in the dashboard. */
  preview: string;
  hash: string;
  createdAt: number;
  revokedAt: number | null;
  /**
   * What the key may call. Absent on keys made before keys had scopes, and on those the previous
   * version still makes during a rolling deploy: such a key has every scope (`scopesOf`).
   */
  scopes?: ApiKeyScope[];
  /**
   * The wallet address of the member who made it. Absent on keys made before makers were
   * recorded (and by tasks outside the dashboard): nobody's, never guessed.
   */
  createdBy?: string;
}

/** The scopes of a key. */
export function scopesOf(record: ApiKeyRecord): readonly ApiKeyScope[] {
  return record.scopes ?? API_KEY_SCOPES;
}

/** What the hash index points to: a key's project and id, the same for the key's whole life. */
export interface ApiKeyRef {
  projectId: string;
  keyId: string;
}

/** The most active keys one project may have. */
export const MAX_ACTIVE_KEYS_PER_PROJECT = 10;
/** How long a revoked key's record is kept: 30 days. */
export const REVOKED_KEY_KEPT_MS = 30 * 24 * 60 * 60 * 1000;

/** Every key starts with this; the live marker leaves room for test keys later. */
const API_KEY_PREFIX = "blk_live_";
const API_KEY_PATTERN = /^blk_live_[A-Za-z0-9_-]{43}$/;

/** Key of a key record. */
export function apiKeyKey(projectId: string, keyId: string): Deno.KvKey {
  return ["api_keys", projectId, keyId];
}
/** Key of the hash index (value: ApiKeyRef). */
export function apiKeyHashKey(hash: string): Deno.KvKey {
  return ["api_keys_by_hash", hash];
}
/** Key of a project's active key count. */
function activeKeyCountKey(projectId: string): Deno.KvKey {
  return ["api_key_counts", projectId];
}

/** True when `key` has the API key shape; checked before any store read. */
export function isApiKeyShape(key: string): boolean {
  return API_KEY_PATTERN.test(key);
}

/** Thrown by `createApiKey` when the project already has the maximum of active keys. */
export class KeyLimitError extends Error {}

/**
 * Creates a key for the project with `scopes` (every scope unless given) and returns its record
 * and the plaintext (shown once); `audit` builds the entry recorded with it from the record. A key
 * a member makes names them (`maker`), whose entry its commit checks under the maker's rule.
 */
export async function createApiKey(
  kv: Deno.Kv,
  projectId: string,
  now: number,
  options: {
    scopes?: readonly ApiKeyScope[];
    maker?: { address: string; rule: MemberRule } | undefined;
    audit?: ((record: ApiKeyRecord) => AuditInput) | undefined;
  } = {},
): Promise<{ record: ApiKeyRecord; plaintext: string }> {
  const plaintext = API_KEY_PREFIX + randomToken(32);
  const record: ApiKeyRecord = {
    id: ulid(now),
    projectId,
    preview: plaintext.slice(0, API_KEY_PREFIX.length + 4),
    hash: sha256Hex(plaintext),
    createdAt: now,
    revokedAt: null,
    scopes: API_KEY_SCOPES.filter((scope) => (options.scopes ?? API_KEY_SCOPES).includes(scope)),
    ...(options.maker ? { createdBy: options.maker.address } : {}),
  };
  return await commitWithRetry("create API key", async () => {
    const [countEntry, makerEntry] = await Promise.all([
      kv.get<number>(activeKeyCountKey(projectId)),
      options.maker ? getMemberEntryUnder(kv, projectId, options.maker) : null,
    ]);
    const count = countEntry.value ?? 0;
    if (count >= MAX_ACTIVE_KEYS_PER_PROJECT) throw new KeyLimitError();
    const ref: ApiKeyRef = { projectId, keyId: record.id };
    const op = kv.atomic()
      .check(countEntry, ...(makerEntry ? [makerEntry] : []))
      .check({ key: apiKeyHashKey(record.hash), versionstamp: null })
      .set(apiKeyKey(projectId, record.id), record)
      .set(apiKeyHashKey(record.hash), ref)
      .set(activeKeyCountKey(projectId), count + 1);
    if (options.audit) addAuditEntry(op, options.audit(record));
    const result = await op.commit();
    if (result.ok || await wasWrittenBy(kv, apiKeyKey(projectId, record.id))) {
      return { record, plaintext };
    }
    return RETRY;
  });
}

/** True while a key's record is kept: active, or revoked less than 30 days before `now`. */
export function isKeptApiKey(record: ApiKeyRecord, now: number): boolean {
  return record.revokedAt === null || record.revokedAt + REVOKED_KEY_KEPT_MS > now;
}

/** Lists a project's keys, those revoked in the last 30 days included, oldest first. */
export async function listApiKeys(
  kv: Deno.Kv,
  projectId: string,
  now: number,
): Promise<ApiKeyRecord[]> {
  const keys: ApiKeyRecord[] = [];
  for await (const e of kv.list<ApiKeyRecord>({ prefix: ["api_keys", projectId] })) {
    if (isKeptApiKey(e.value, now)) keys.push(e.value);
  }
  return keys;
}

/**
 * Revokes an active key; false when it is unknown in this project or already revoked. `audit`
 * builds the entry recorded with it from the key's record.
 */
export async function revokeApiKey(
  kv: Deno.Kv,
  projectId: string,
  keyId: string,
  now: number,
  options: { audit?: ((record: ApiKeyRecord) => AuditInput) | undefined } = {},
): Promise<boolean> {
  return await commitWithRetry("revoke API key", async () => {
    const [entry, countEntry] = await kv.getMany<[ApiKeyRecord, number]>([
      apiKeyKey(projectId, keyId),
      activeKeyCountKey(projectId),
    ]);
    if (!entry.value || entry.value.revokedAt !== null) return false;
    const op = kv.atomic()
      .check(entry, countEntry)
      .set(activeKeyCountKey(projectId), Math.max(0, (countEntry.value ?? 1) - 1));
    addKeyRevocation(op, entry.value, now);
    if (options.audit) addAuditEntry(op, options.audit(entry.value));
    if ((await op.commit()).ok) return true;
    return RETRY;
  });
}

/** A project's active keys, read after the count they are checked on (`addApiKeyRevocations`). */
export interface ActiveApiKeys {
  count: Deno.KvEntryMaybe<number>;
  keys: ApiKeyRecord[];
}

/**
 * Reads a project's active keys for a commit that may revoke some: the count first, which every
 * creation and revocation moves, so checking it covers every key read after it.
 */
export async function readActiveApiKeys(kv: Deno.Kv, projectId: string): Promise<ActiveApiKeys> {
  const count = await kv.get<number>(activeKeyCountKey(projectId));
  const keys: ApiKeyRecord[] = [];
  for await (const e of kv.list<ApiKeyRecord>({ prefix: ["api_keys", projectId] })) {
    if (e.value.revokedAt === null) keys.push(e.value);
  }
  return { count, keys };
}

/**
 * Adds to `op` the revocation of `revoked` (some of `read.keys`), checked on `read.count`: as
 * `revokeApiKey` does one by one, and the project's reservations check each key's record.
 */
export function addApiKeyRevocations(
  op: Deno.AtomicOperation,
  read: ActiveApiKeys,
  revoked: readonly ApiKeyRecord[],
  now: number,
): void {
  if (revoked.length === 0) return;
  const { projectId } = revoked[0]!;
  op.check(read.count)
    .set(activeKeyCountKey(projectId), Math.max(0, (read.count.value ?? 0) - revoked.length));
  for (const record of revoked) addKeyRevocation(op, record, now);
}

// The record marked revoked (kept 30 days) and its hash deleted, so nothing finds it again.
function addKeyRevocation(op: Deno.AtomicOperation, record: ApiKeyRecord, now: number): void {
  op.set(apiKeyKey(record.projectId, record.id), { ...record, revokedAt: now }, {
    expireIn: REVOKED_KEY_KEPT_MS,
  }).delete(apiKeyHashKey(record.hash));
}

/** Where a plaintext key's hash points, or null for a key never made (or long revoked). */
export async function getApiKeyRef(kv: KvReader, hash: string): Promise<ApiKeyRef | null> {
  return (await kv.get<ApiKeyRef>(apiKeyHashKey(hash))).value;
}

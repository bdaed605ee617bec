/**
 * Transaction requests, one record per (project, idempotency key), kept permanently, except a key
 * whose latest attempt failed without leaving the node (deleted 30 days later; `lib/tx/record/transitions.ts`
 * decides). The record holds the latest attempt; a retried failed key starts a new attempt in the
 * same record, and the signed earlier attempts stay listed in `previous` with their signature and
 * blockhash validity.
 *
 * Two indexes list a project's requests newest attempt first: by time, and by status. Each holds
 * one entry per key (its latest attempt), moved in the same commit as every change of the record's
 * attempt or status, so a status filter reads only matching requests.
 */
import type { Cluster } from "../core/cluster.ts";
import { must } from "../core/must.ts";
import type { TxKind } from "../core/events.ts";
import type { KvReader } from "./read_batches.ts";

/** Every status of a transaction request, in the spec's order ("Transaction request status"). */
export const TX_STATUSES = ["pending", "submitted", "confirmed", "failed"] as const;
/** Status of a transaction request. */
export type TxStatus = typeof TX_STATUSES[number];

/** The request's recipient as sent: a player or a wallet address. */
export type TxTarget = { userId: number } | { address: string };

/** A transaction request body as sent; `amount` stays the exact text, so `1` and `1.0` differ. */
export interface TxBody {
  to: TxTarget;
  mint: string | null;
  amount: string;
}

/** What an attempt reserved against the rolling limits, so a failure can give it back. */
interface TxUsageClaim {
  /** Clock time of the reservation: the entry's position in every window. */
  at: number;
  /** `SOL` or the mint. */
  asset: string;
  /** Raw base units. */
  amount: bigint;
  recipient: string;
  userId: number | null;
}

/** A signed transaction, stored before it is first sent so it can be rebroadcast or proven expired. */
export interface SignedTx {
  /** The signed wire transaction, base64. */
  wire: string;
  blockhash: string;
  lastValidBlockHeight: bigint;
  /** A slot it cannot land at or before: its blockhash's block's (or, stored by an earlier version, a lower bound of it). */
  blockhashSlot: bigint;
  /** Clock time when it was signed and stored. */
  signedAt: number;
  /** True once an RPC node accepted it (after preflight); later sends skip preflight. */
  accepted: boolean;
  /** True when its first send was refused in preflight: it never left the node. */
  refused?: boolean;
  /** Payouts it carries when more than one (items of a batch sharing it); absent for one. */
  shared?: number;
  /**
   * The idempotency keys of those payouts, in the transaction's order, settled together in one
   * commit (`lib/tx/record/transitions.ts`); absent for one, and on those stored by earlier versions,
   * which kept only the count.
   */
  sharedKeys?: string[];
}

/** An earlier signed attempt of a key, proven dead before the key was retried. */
export interface PastAttempt {
  attempt: number;
  attemptId: string;
  signature: string;
  blockhash: string;
  lastValidBlockHeight: bigint;
  error: string | null;
}

/** A transaction request as stored. */
export interface TxRequestRecord {
  projectId: string;
  key: string;
  kind: TxKind;
  /** The project's cluster, where the transaction is sent and checked. */
  cluster: Cluster;
  /** The body as sent, compared field by field when the key is used again. */
  body: TxBody;
  /** 1 for the first attempt, +1 for each retry of a failed one. */
  attempt: number;
  /** Unique id of the current attempt (a ULID, so it also orders attempts by time). */
  attemptId: string;
  status: TxStatus;
  recipient: string;
  /** The recipient player at request time, for the `tx` event; null when none. */
  recipientUserId: number | null;
  signature: string | null;
  error: string | null;
  usage: TxUsageClaim;
  signed: SignedTx | null;
  /**
   * Clock time after which this attempt can no longer be signed: its route has answered by then.
   * Past it (plus a margin for clocks), any instance may abandon an unsigned attempt.
   */
  signBy: number;
  /**
   * The attempt's confirmation job (`tx_confirm`), once it has one. The field keeps the name it
   * was first stored under: every kept record carries it, and a new name would rewrite them all.
   */
  checkJobId: string | null;
  /** Earlier signed attempts of the key, oldest first. */
  previous: PastAttempt[];
  /**
   * When a check first found the attempt past its expiry margin without being able to prove it
   * did not land (a node hiding its history, a pruned one); absent otherwise. It stays unsettled.
   */
  expiryUnprovenAt?: number;
  createdAt: number;
  updatedAt: number;
  /** The dashboard member who asked for it: withdrawals only. */
  requestedBy?: string;
  /**
   * Set only when its latest attempt failed without leaving the node: from then on the key is
   * unknown (the record is stored with `expireIn` to that time, which is only the earliest
   * deletion, so readers check it too).
   */
  expiresAt?: number;
}

/** Index entry of a request not yet final (value of `txUnsettledKey`). */
export interface TxUnsettledRef {
  attemptId: string;
  since: number;
}

/** Key of a request record. */
export function txRequestKey(projectId: string, key: string): Deno.KvKey {
  return ["tx_requests", projectId, key];
}
/** Key of a project's attempt in time order (value: the idempotency key). */
export function txAttemptByTimeKey(projectId: string, attemptId: string): Deno.KvKey {
  return ["tx_attempts_by_time", projectId, attemptId];
}
/** Key of a project's attempt in its status's index (value: the idempotency key). */
export function txByStatusKey(projectId: string, status: TxStatus, attemptId: string): Deno.KvKey {
  return ["tx_by_status", projectId, status, attemptId];
}
/** Key of a pending or submitted attempt, listed by the sweep (value: `TxUnsettledRef`). */
export function txUnsettledKey(projectId: string, key: string): Deno.KvKey {
  return ["tx_unsettled", projectId, key];
}

/**
 * Appends to `op` the move of a request in the status index: from how it stood (`before`: its
 * status and attempt, null for a new key) to `after`. `expireIn` when the record itself expires.
 */
export function addTxStatusMove(
  op: Deno.AtomicOperation,
  before: Pick<TxRequestRecord, "status" | "attemptId"> | null,
  after: TxRequestRecord,
  options: { expireIn?: number } = {},
): void {
  if (before) op.delete(txByStatusKey(after.projectId, before.status, before.attemptId));
  op.set(txByStatusKey(after.projectId, after.status, after.attemptId), after.key, options);
}

/** Returns the request's entry (versionstamp null when the key was never used). */
export function getTxRequestEntry(
  kv: KvReader,
  projectId: string,
  key: string,
): Promise<Deno.KvEntryMaybe<TxRequestRecord>> {
  return kv.get<TxRequestRecord>(txRequestKey(projectId, key));
}

/** The record as readers see it: null once it expired (`expiresAt` at or before `now`). */
export function liveTxRequest(
  record: TxRequestRecord | null,
  now: number,
): TxRequestRecord | null {
  return record && (record.expiresAt === undefined || record.expiresAt > now) ? record : null;
}

/**
 * Returns the request, or null when the key was never used in the project (or, given `now`, its
 * record expired).
 */
export async function getTxRequest(
  kv: KvReader,
  projectId: string,
  key: string,
  now?: number,
): Promise<TxRequestRecord | null> {
  const record = (await getTxRequestEntry(kv, projectId, key)).value;
  return now === undefined ? record : liveTxRequest(record, now);
}

/** One page of a project's requests, newest attempt first. */
interface TxPage {
  records: TxRequestRecord[];
  /** Attempt id of the last request examined, to pass as `after`; null when none are left. */
  next: string | null;
}

/**
 * Lists a project's requests by their latest attempt, newest first, after the attempt id `after`:
 * up to `limit`, from the status index when `status` is given (only matching requests are read),
 * examining at most `maxExamined` index entries.
 */
export async function listTxRequests(
  kv: Deno.Kv,
  projectId: string,
  options: {
    now: number;
    limit: number;
    after?: string | undefined;
    status?: TxStatus | undefined;
    maxExamined?: number;
  },
): Promise<TxPage> {
  const { now, limit, after, status } = options;
  const maxExamined = options.maxExamined ?? 1_000;
  const prefix = status ? ["tx_by_status", projectId, status] : ["tx_attempts_by_time", projectId];
  const iter = kv.list<string>(
    after ? { prefix, end: [...prefix, after] } : { prefix },
    { reverse: true },
  );
  const records: TxRequestRecord[] = [];
  let examined = 0;
  let next: string | null = null;
  let pending: Array<{ attemptId: string; key: string }> = [];
  // Reads the pending index entries' records (10 per read); true once the page is full.
  const readPending = async (): Promise<boolean> => {
    const entries = await kv.getMany<TxRequestRecord[]>(
      pending.map((p) => txRequestKey(projectId, p.key)),
    );
    for (const [i, { attemptId }] of pending.entries()) {
      if (records.length === limit) return true;
      next = attemptId;
      const record = liveTxRequest(must(entries[i], "getMany entry for a pending key").value, now);
      // A key retried (or settled) since the index was read has moved: skip its stale entry.
      if (!record || record.attemptId !== next) continue;
      if (!status || record.status === status) records.push(record);
    }
    pending = [];
    return records.length === limit;
  };
  for await (const entry of iter) {
    pending.push({ attemptId: entry.key[prefix.length] as string, key: entry.value });
    if (++examined < maxExamined && pending.length < 10) continue;
    if (await readPending() || examined >= maxExamined) return { records, next };
  }
  if (pending.length > 0 && await readPending()) return { records, next };
  return { records, next: null };
}

/** Lists every attempt still pending or submitted, across projects (for the sweep). */
export async function listUnsettledTx(
  kv: Deno.Kv,
  options: { limit?: number } = {},
): Promise<Array<{ projectId: string; key: string } & TxUnsettledRef>> {
  const found: Array<{ projectId: string; key: string } & TxUnsettledRef> = [];
  const iter = kv.list<TxUnsettledRef>({ prefix: ["tx_unsettled"] }, {
    limit: options.limit ?? 10_000,
  });
  for await (const entry of iter) {
    found.push({ projectId: entry.key[1] as string, key: entry.key[2] as string, ...entry.value });
  }
  return found;
}

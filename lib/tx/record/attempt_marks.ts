/**
 * The lifecycle's events short of a final status (`lifecycle.ts` states them, `transitions.ts`
 * commits the others). Each is one commit checked on the request record (on each record a shared
 * transaction pays), as the table allows.
 *
 * | Event           | Marked by                                                                   |
 * | --------------- | --------------------------------------------------------------------------- |
 * | sign            | `recordSigned`                                                              |
 * | accept          | `markAccepted`                                                              |
 * | answer          | `markSubmitted`                                                             |
 * | expiry_unproven | `markExpiryUnproven`                                                        |
 */
import { commitWithRetry, RETRY } from "../../../core/commit_retry.ts";
import type { TxContext } from "../runtime.ts";
import {
  addTxStatusMove,
  getTxRequestEntry,
  type SignedTx,
  type TxRequestRecord,
} from "../../../kv/tx_requests.ts";
import type { AttemptRef } from "./transitions.ts";
import { type AttemptEvent, isFinal } from "../lifecycle/lifecycle.ts";
import { applyEvent } from "../lifecycle/apply_event.ts";

/**
 * Records that a send of the attempt was accepted, so every later send (from any path) skips
 * preflight. Returns the record afterwards.
 */
export async function markAccepted(
  ctx: TxContext,
  ref: AttemptRef,
): Promise<TxRequestRecord | null> {
  return await updateUnsettled(ctx, ref, { type: "accept" });
}

/**
 * Moves a pending attempt to submitted (its route answered without a final status); returns the
 * record afterwards. `accepted`: a send of the route was accepted by a node, so every later send
 * skips preflight (the route keeps that in memory until here, one commit fewer per payout).
 */
export async function markSubmitted(
  ctx: TxContext,
  ref: AttemptRef,
  options: { accepted?: boolean; known?: Deno.KvEntry<TxRequestRecord> | undefined } = {},
): Promise<TxRequestRecord | null> {
  const event = { type: "answer", accepted: options.accepted === true } as const;
  return await updateUnsettled(ctx, ref, event, options.known);
}

/**
 * Marks, once, an attempt whose expiry margin has passed but whose expiry cannot be proven (the
 * node hides its history, or the wallet's history is pruned): it stays unsettled, and the
 * dashboard shows it as needing attention. Returns the record afterwards.
 */
export async function markExpiryUnproven(
  ctx: TxContext,
  ref: AttemptRef,
): Promise<TxRequestRecord | null> {
  return await updateUnsettled(ctx, ref, { type: "expiry_unproven", at: ctx.clock.now() });
}

/**
 * Applies `event` to a still-unsettled attempt; returns the record as it stands afterwards.
 * `known`: the record as the caller last wrote it, committed against without a read first.
 */
async function updateUnsettled(
  ctx: TxContext,
  ref: AttemptRef,
  event: AttemptEvent,
  known?: Deno.KvEntry<TxRequestRecord>,
): Promise<TxRequestRecord | null> {
  return await commitWithRetry("update the transaction request", async (round) => {
    const entry = round === 0 && known
      ? known
      : await getTxRequestEntry(ctx.kv, ref.projectId, ref.key);
    const record = entry.value;
    if (!record || record.attemptId !== ref.attemptId || isFinal(record)) return record;
    const next = applyEvent(record, event, ctx.clock.now());
    if (!next) return record;
    const op = ctx.kv.atomic().check(entry).set(entry.key, next);
    if (next.status !== record.status) addTxStatusMove(op, record, next);
    if ((await op.commit()).ok) return next;
    return RETRY;
  });
}

/**
 * Stores the signed transaction with every attempt it pays before its first send, in one commit
 * checked against each reserved record and made only before every attempt's sign-by time, so a
 * transaction shared by several keys is stored with all of them or with none. Null when an
 * attempt changed meanwhile (declared abandoned) or its time is up: then it must not be sent.
 * Answers the stored entries (the route's later changes commit against them without a read).
 */
export async function recordSigned(
  ctx: TxContext,
  entries: Deno.KvEntry<TxRequestRecord>[],
  signed: { signature: string; tx: SignedTx },
): Promise<Deno.KvEntry<TxRequestRecord>[] | null> {
  const now = ctx.clock.now();
  if (entries.some((entry) => now > entry.value.signBy)) return null;
  const op = ctx.kv.atomic().check(...entries);
  const sharedKeys = entries.map((entry) => entry.value.key);
  const tx = entries.length > 1 ? { ...signed.tx, shared: entries.length, sharedKeys } : signed.tx;
  const event = { type: "sign", signature: signed.signature, tx } as const;
  const stored: TxRequestRecord[] = [];
  for (const entry of entries) {
    const next = applyEvent(entry.value, event, now);
    if (!next) return null;
    op.set(entry.key, next);
    stored.push(next);
  }
  const result = await op.commit();
  if (!result.ok) return null;
  return entries.map((entry, i) => ({
    key: entry.key,
    value: stored[i]!,
    versionstamp: result.versionstamp,
  }));
}

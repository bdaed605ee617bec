/**
 * The lifecycle's one move out of a final state: a `failed` key found landed after all
 * (`found_landed`), in one checked commit with its `tx` event and its usage counted again.
 */
import type { TxContext } from "../runtime.ts";
import { log } from "../../../core/log.ts";
import { commitWithEvents } from "../../events/record.ts";
import { addTxStatusMove, type TxRequestRecord } from "../../../kv/tx_requests.ts";
import { applyEvent } from "../lifecycle/apply_event.ts";
import { addRewardSettlement } from "./reward_settlement.ts";
import { addLandedUsage } from "./usage_release.ts";
import { txEventOf } from "./transitions.ts";

/**
 * Turns a `failed` key back to `confirmed` when one of its attempts, `signature`, is found landed
 * after all, with its `tx` event, and counts its payment in the limits' windows again. No path
 * fails a signed attempt that can still land, so only a status settled wrongly (as versions before
 * the expiry proof did on a resend's preflight refusal, or on a node hiding its history) gets
 * here: a state only the chain can judge, so it is judged here and not migrated. Returns the
 * record afterwards; null when the entry changed meanwhile.
 */
export async function confirmLandedAttempt(
  ctx: TxContext,
  entry: Deno.KvEntry<TxRequestRecord>,
  signature: string,
): Promise<TxRequestRecord | null> {
  const record = entry.value;
  const now = ctx.clock.now();
  const next = applyEvent(record, { type: "found_landed", signature }, now);
  if (!next) return null;
  const op = ctx.kv.atomic().check(entry).set(entry.key, next);
  addTxStatusMove(op, record, next);
  await addLandedUsage(ctx, op, record, now);
  const reward = await addRewardSettlement(ctx, op, next, now);
  const committed = await commitWithEvents(ctx, op, {
    projectId: record.projectId,
    events: [txEventOf(next, "confirmed"), ...reward?.events ?? []],
  });
  if (!committed.ok) return null;
  reward?.logMove();
  log("warn", "Transaction request found landed after it was marked failed", {
    projectId: record.projectId,
    idempotencyKey: record.key,
    attempt: record.attempt,
    signature,
  });
  return next;
}

/**
 * Following a sent attempt until the chain decides: one follower, two strategies, composed as
 * `@solana/kit` composes its confirmation waiters (one signature-confirmation promise raced against
 * a strategy's own: the blockhash's block height exceeded, or a timer). Here every look turns the
 * signature's status into a verdict (`expiry_proof.ts`), settles a final one (every key of the
 * transaction in one commit, `transitions.ts`), and sends the same bytes again while one can land
 * and the strategy says it is due. What each strategy brings:
 *
 * |                | route: `waitForConfirmation`        | background: `followRound`              |
 * | -------------- | ----------------------------------- | -------------------------------------- |
 * | its status     | the instance's poller, every 400 ms | one lookup a round, or the sweep's     |
 * |                |                                     | batch                                  |
 * | raced against  | the wait's end: 15 s, or the        | the expiry proof, when none is found   |
 * |                | deadline                            |                                        |
 * | looks          | each poll, until a verdict or the   | one a run: the `tx_confirm` job every  |
 * |                | end                                 | 1.5 s, the sweep every 30 s            |
 * | sends again    | every 2 s                           | each round, once the route is over     |
 * | a node accepts | kept (the only sender meanwhile)    | stored at once (`markAccepted`)        |
 * | settles from   | the entries it wrote                | a fresh read                           |
 * | ends           | `submitted`, also when settling     | pending to submitted once the route is |
 * |                | misses the deadline or keeps losing | surely over                            |
 *
 * Every send re-reads the stored attempt first: one settled by another path is not sent again.
 */
import type { Signature } from "@solana/kit";
import { readForSettlement } from "../record/settlement_reads.ts";
import type { TxContext } from "../runtime.ts";
import { CommitConflictError } from "../../../core/commit_retry.ts";
import { log } from "../../../core/log.ts";
import { getTxRequest, type TxRequestRecord } from "../../../kv/tx_requests.ts";
import { type AttemptOutcome, EXPIRED_ERROR, txResultOf } from "../lifecycle/result.ts";
import {
  attemptRef,
  type FinalOutcome,
  settleAttempt,
  settleTransaction,
} from "../record/transitions.ts";
import { isFinal } from "../lifecycle/lifecycle.ts";
import { markAccepted, markExpiryUnproven, markSubmitted } from "../record/attempt_marks.ts";
import { type CallSignals, callSignals, type Deadline, rpcSignal } from "../rpc/timing.ts";
import { confirmOnChain, sendSignedTx } from "../rpc/confirm.ts";
import { type ChainVerdict, landedVerdict, type StatusValue } from "../rpc/expiry_proof.ts";
import { rpcFailureReason } from "../rpc/chain_errors.ts";

/** The final status a verdict settles, or null while the chain has not decided. */
function outcomeOf(verdict: ChainVerdict): FinalOutcome | null {
  switch (verdict.kind) {
    case "confirmed":
      return { status: "confirmed" };
    case "failed":
      return { status: "failed", error: verdict.error };
    case "expired":
      return { status: "failed", error: EXPIRED_ERROR };
    default:
      return null;
  }
}

/** True when the same signed bytes may still land and no copy has landed yet. */
function worthSendingAgain(verdict: ChainVerdict): boolean {
  return verdict.kind === "unconfirmed" && !verdict.landed && verdict.canLand;
}

/**
 * The route's strategy: follows the transaction stored with `storedEntries` (its first send just
 * made, `accepted` when a node took it) for up to the confirmation wait; answers each attempt's
 * outcome in order.
 */
export async function waitForConfirmation(
  ctx: TxContext,
  storedEntries: Deno.KvEntry<TxRequestRecord>[],
  options: { deadline: Deadline; accepted: boolean },
): Promise<AttemptOutcome[]> {
  const { deadline } = options;
  let { accepted } = options;
  const first = storedEntries[0]!.value;
  const timing = ctx.tx.timing;
  const signature = first.signature as Signature;
  const waitEnd = performance.now() + Math.min(timing.confirmWaitMs, deadline.left());
  let lastSent = performance.now();
  // What the settlement reads besides the records, read while the transaction confirms.
  const reads = waitEnd > lastSent ? readForSettlement(ctx, storedEntries) : undefined;
  reads?.catch(() => {});
  for (;;) {
    const left = waitEnd - performance.now();
    if (left <= 0) break;
    let status: StatusValue;
    try {
      // The poller's next status, raced against the wait's end.
      status = await ctx.tx.statuses.next(
        first.cluster,
        signature,
        AbortSignal.any([deadline.signal, AbortSignal.timeout(left)]),
      );
    } catch {
      // A failed lookup leaves the attempts as they are; the wait goes on until its end.
      continue;
    }
    // A missing status is not judged here: its blockhash outlives the wait.
    const verdict = status
      ? landedVerdict(status)
      : { kind: "unconfirmed", landed: false, canLand: true } as const;
    const outcome = outcomeOf(verdict);
    if (outcome) {
      return await settleForRoute(ctx, storedEntries, outcome, {
        signal: deadline.signal,
        accepted,
        reads,
      });
    }
    if (performance.now() - lastSent < timing.rebroadcastMs || !worthSendingAgain(verdict)) {
      continue;
    }
    const current = await getTxRequest(ctx.kv, first.projectId, first.key);
    if (!current || current.attemptId !== first.attemptId || isFinal(current)) break;
    lastSent = performance.now();
    const again = await sendSignedTx(ctx.rpc[first.cluster], { ...first.signed!, accepted }, {
      abortSignal: rpcSignal(timing, deadline),
    });
    if (again.kind === "accepted") accepted = true;
  }
  return await Promise.all(storedEntries.map(async (known) => {
    const record = known.value;
    const now = (await markSubmitted(ctx, attemptRef(record), { accepted, known })) ?? record;
    return { kind: "result", result: txResultOf(now) } as const;
  }));
}

/**
 * Settles every attempt of the route's transaction in one commit (`settleTransaction`); when that
 * could not take its turn before the deadline, or kept losing to concurrent changes, each is
 * answered `submitted` (the background settles them).
 */
export async function settleForRoute(
  ctx: TxContext,
  storedEntries: Deno.KvEntry<TxRequestRecord>[],
  outcome: FinalOutcome,
  options: NonNullable<Parameters<typeof settleTransaction>[3]> & { accepted: boolean },
): Promise<AttemptOutcome[]> {
  const { accepted, ...settleOptions } = options;
  const first = storedEntries[0]!.value;
  let settled: Map<string, TxRequestRecord> | null = null;
  try {
    settled = await settleTransaction(ctx, attemptRef(first), outcome, {
      ...settleOptions,
      known: storedEntries,
    });
  } catch (error) {
    // The deadline came first, or the project's records kept changing (a round end on many
    // instances): the payout was sent either way, and the background settles it.
    const contended = error instanceof CommitConflictError;
    if (!options.signal?.aborted && !contended) throw error;
    log("warn", "Settlement left to the background", {
      projectId: first.projectId,
      idempotencyKeys: storedEntries.map(({ value }) => value.key),
      reason: contended ? "contention" : "deadline",
    });
  }
  return await Promise.all(storedEntries.map(async ({ value: record }) => {
    const now = settled?.get(record.key) ??
      await markSubmitted(ctx, attemptRef(record), { accepted }) ?? record;
    return { kind: "result", result: txResultOf(now) } as const;
  }));
}

/**
 * True once the attempt's route has surely answered (it marked the attempt submitted, or its
 * sign-by time, which bounds the route, is over by more than the margin for clocks): only then do
 * background paths send it again.
 */
function routeIsOver(ctx: TxContext, record: TxRequestRecord): boolean {
  if (record.status !== "pending") return true;
  return ctx.clock.now() > record.signBy + ctx.tx.timing.abandonMarginMs;
}

/**
 * The background's strategy: one look at a signed attempt (re-read first; `status` is a lookup
 * just made, by the sweep's batch), then pending to submitted once its route is surely over.
 * Returns the record afterwards; RPC failures leave the attempt as it is, for the next round.
 */
export async function followRound(
  ctx: TxContext,
  known: TxRequestRecord,
  options: { status?: StatusValue | undefined; signals?: CallSignals } = {},
): Promise<TxRequestRecord> {
  const current = await lookInBackground(ctx, known, options);
  if (isFinal(current) || current.status !== "pending" || !current.signed) return current;
  if (!routeIsOver(ctx, current)) return current;
  return (await markSubmitted(ctx, attemptRef(current))) ?? current;
}

async function lookInBackground(
  ctx: TxContext,
  known: TxRequestRecord,
  options: { status?: StatusValue | undefined; signals?: CallSignals },
): Promise<TxRequestRecord> {
  // Another path (the route, a confirmation job, the sweep, another instance) may have settled it.
  const record = await getTxRequest(ctx.kv, known.projectId, known.key) ?? known;
  if (record.attemptId !== known.attemptId) return record;
  if (isFinal(record) || !record.signed || !record.signature) return record;
  const rpc = ctx.rpc[record.cluster];
  const signed = record.signed;
  const signals = options.signals ?? callSignals(ctx.tx.timing);
  const fields = {
    projectId: record.projectId,
    idempotencyKey: record.key,
    signature: record.signature,
  };
  let verdict: ChainVerdict;
  try {
    verdict = await confirmOnChain(rpc, {
      signature: record.signature as Signature,
      signed,
      attemptId: record.attemptId,
    }, { signals, status: options.status });
  } catch (error) {
    log("warn", "Transaction check failed; will retry", {
      ...fields,
      error: rpcFailureReason(error),
    });
    return record;
  }
  const ref = attemptRef(record);
  const outcome = outcomeOf(verdict);
  if (outcome) return (await settleAttempt(ctx, ref, outcome)) ?? record;
  if (verdict.kind === "unproven") {
    if (record.expiryUnprovenAt !== undefined) return record;
    log("warn", "Expiry cannot be proven: the attempt stays open and needs attention", fields);
    return (await markExpiryUnproven(ctx, ref)) ?? record;
  }
  // Known's route, as read by the round that started this look, decides whether it is over.
  if (!routeIsOver(ctx, known) || !worthSendingAgain(verdict)) return record;
  const sent = await sendSignedTx(rpc, signed, { abortSignal: signals() });
  if (sent.kind === "accepted" && !signed.accepted) {
    return (await markAccepted(ctx, ref)) ?? record;
  }
  if (sent.kind === "rejected" && !sent.harmless) {
    // An earlier copy may still land: only the chain decides from here.
    log("warn", "Resend refused in preflight; the attempt stays open", {
      ...fields,
      error: sent.error,
    });
  }
  if (sent.kind === "unknown") {
    log("warn", "Rebroadcast failed", { ...fields, reason: sent.reason });
  }
  return record;
}

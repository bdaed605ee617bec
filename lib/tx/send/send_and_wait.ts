/**
 * Step 14 for reserved attempts that share one transaction (a single request's one attempt, or up
 * to `maxSharedPayments` items of a batch of one kind and asset): the signed bytes stored with
 * every attempt, the first send, then the route's wait (`follower.ts`).
 *
 * | Concern     | Rule                                                                            |
 * | ----------- | ------------------------------------------------------------------------------- |
 * | Stored      | A single request's bytes by its reservation, which signs beside it              |
 * |             | (`reserve.ts`); a batch's items, reserved first, by `recordSigned` here. Once   |
 * |             | stored, the attempts count as sent.                                             |
 * | Shared fate | The keys of a shared transaction are built and signed together (a 502 fails     |
 * |             | them all), stored together, refused, landed or confirmed together, in one       |
 * |             | commit.                                                                         |
 * | Refused     | Only the first send's preflight refusal settles them `failed`, and only when it |
 * |             | is about the transaction itself: `BlockhashNotFound` or `AlreadyProcessed` (a   |
 * |             | node may answer them for a copy it did forward) are followed like an unclear    |
 * |             | answer.                                                                         |
 * | Deadline    | The route answers within the request's deadline (`timing.answerWithinMs` from   |
 * |             | its arrival) whatever the RPC does: every RPC call aborts at the deadline.      |
 */
import type { Signature } from "@solana/kit";
import type { TxContext } from "../runtime.ts";
import { ApiError } from "../../../core/api_error.ts";
import { log } from "../../../core/log.ts";
import { getTxRequest, type TxRequestRecord } from "../../../kv/tx_requests.ts";
import { type AttemptOutcome, txResultOf } from "../lifecycle/result.ts";
import { BuildError, type SignOutcome, signPlan, type TxPlan } from "../build/build.ts";
import { attemptRef, settleAttempt } from "../record/transitions.ts";
import { isFinal } from "../lifecycle/lifecycle.ts";
import { recordSigned } from "../record/attempt_marks.ts";
import { type Deadline, rpcSignal } from "../rpc/timing.ts";
import { sendSignedTx } from "../rpc/confirm.ts";
import { settleForRoute, waitForConfirmation } from "../follow/follower.ts";

/**
 * Fails reserved attempts whose transaction could not be built or signed (step 14's 502: recorded
 * as failed with a `tx` event, nothing sent); rethrows an internal error once they are failed.
 */
export async function failUnbuilt(
  ctx: TxContext,
  entries: Deno.KvEntry<TxRequestRecord>[],
  unbuilt: Extract<SignOutcome, { kind: "unbuilt" }>,
): Promise<AttemptOutcome[]> {
  await Promise.all(
    entries.map((entry) =>
      settleAttempt(ctx, attemptRef(entry.value), { status: "failed", error: unbuilt.message })
    ),
  );
  const { failure } = unbuilt;
  if (!failure) throw unbuilt.cause;
  return entries.map(() => ({ kind: "error", error: failure }));
}

/**
 * Builds, signs, stores, sends and waits for reserved attempts still unsigned (`entries`, in
 * `plan.payments`' order: a batch's shared transaction); answers each one's outcome in that order.
 */
export async function sendAndWait(
  ctx: TxContext,
  plan: TxPlan,
  options: { entries: Deno.KvEntry<TxRequestRecord>[]; deadline: Deadline },
): Promise<AttemptOutcome[]> {
  const { entries, deadline } = options;
  const signed = await signPlan(ctx, plan, { deadline });
  if (signed.kind === "unbuilt") return await failUnbuilt(ctx, entries, signed);
  const storedEntries = await recordSigned(ctx, entries, signed);
  if (!storedEntries) return await notStored(ctx, entries);
  return await sendStoredAndWait(ctx, storedEntries, { deadline });
}

/**
 * Sends the transaction stored with `storedEntries` (the attempts it pays, signed bytes stored)
 * and follows it for up to the confirmation wait; answers each attempt's outcome in order.
 */
export async function sendStoredAndWait(
  ctx: TxContext,
  storedEntries: Deno.KvEntry<TxRequestRecord>[],
  options: { deadline: Deadline },
): Promise<AttemptOutcome[]> {
  const { deadline } = options;
  const stored = storedEntries.map((entry) => entry.value);
  const first = stored[0]!;
  const tx = first.signed!;
  const timing = ctx.tx.timing;
  const rpc = ctx.rpc[first.cluster];
  const signature = first.signature as Signature;
  const fields = {
    projectId: first.projectId,
    idempotencyKeys: stored.map((r) => r.key),
    signature,
  };
  const sent = await sendSignedTx(rpc, tx, { abortSignal: rpcSignal(timing, deadline) });
  if (sent.kind === "rejected" && !sent.harmless) {
    // Preflight refused the transaction itself, so the node did not forward it: nothing was sent.
    return await settleForRoute(ctx, storedEntries, {
      status: "failed",
      error: sent.error,
      refused: true,
    }, { onlyIf: (current) => current.signed?.accepted === false, accepted: false });
  }
  const accepted = sent.kind === "accepted";
  if (!accepted) {
    log("warn", "First send got no clear answer; rebroadcasting", {
      ...fields,
      reason: sent.kind === "unknown" ? sent.reason : sent.error,
    });
  }
  return await waitForConfirmation(ctx, storedEntries, { deadline, accepted });
}

/**
 * The signed transaction could not be stored, so nothing was sent: an attempt declared abandoned
 * meanwhile answers as it stands; one still unsigned is failed as the node's doing (its time ran
 * out while the node was slow).
 */
async function notStored(
  ctx: TxContext,
  entries: Deno.KvEntry<TxRequestRecord>[],
): Promise<AttemptOutcome[]> {
  const error = new BuildError("the RPC node did not answer in time");
  return await Promise.all(entries.map(async ({ value }) => {
    const current = await getTxRequest(ctx.kv, value.projectId, value.key) ?? value;
    if (current.attemptId === value.attemptId && !isFinal(current) && !current.signed) {
      await settleAttempt(ctx, attemptRef(current), { status: "failed", error: error.message }, {
        onlyIf: (record) => record.signed === null,
      });
      return { kind: "error", error: new ApiError("rpc_error", error.message) } as const;
    }
    log("warn", "Signed transaction not sent: the attempt changed", {
      projectId: value.projectId,
      idempotencyKey: value.key,
    });
    return { kind: "result", result: txResultOf(current) } as const;
  }));
}

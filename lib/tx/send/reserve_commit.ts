/**
 * One round of a reservation (`reserve.ts`): the checks again on the records it read, its places
 * and its request counted in it when they fold, and its one commit, checked on every record read.
 */
import type { TxContext } from "../runtime.ts";
import { addToWindow, HOUR_WINDOW_MS, pruneWindow } from "../../../kv/tx_usage.ts";
import { checkLimits, limitNeed } from "../request/limits.ts";
import { addTxJob } from "../job_payloads.ts";
import {
  addTxStatusMove,
  liveTxRequest,
  txAttemptByTimeKey,
  type TxRequestRecord,
  txUnsettledKey,
  type TxUnsettledRef,
} from "../../../kv/tx_requests.ts";
import { log } from "../../../core/log.ts";
import { isSameRequest } from "../request/request_body.ts";
import type { CheckedRequest } from "../request/checks.ts";
import { idempotencyConflict } from "../request/check_steps.ts";
import { addSenderMove, checkSender } from "../request/sender.ts";
import { confirmLandedAttempt } from "../record/found_landed.ts";
import { applyEvent } from "../lifecycle/apply_event.ts";
import { addFoldedPlaces } from "../allowance/allowance_fold.ts";
import { type Deadline, notReservedInTime } from "../rpc/timing.ts";
import {
  type Attempt,
  reservationEntries,
  type ReserveRound,
  type ReserveState,
} from "./reserve_inputs.ts";

/**
 * One round's checks again on what it read, and its commit: the `reserve` event applied to the
 * key's record (`lifecycle.ts`) with the attempt's windows, indexes and confirmation job, checked
 * against every record read.
 */
export async function commitReservation(
  ctx: TxContext,
  request: CheckedRequest,
  state: ReserveState,
  attempt: Attempt,
  deadline: Deadline | undefined,
): Promise<ReserveRound> {
  const projectId = request.project.id;
  const key = request.input.idempotencyKey;
  const { attemptId } = attempt;
  const [{ entries, ledgers, counters }, signed] = await Promise.all([
    attempt.read,
    attempt.signed(),
  ]);
  const unbuilt = signed?.kind === "unbuilt" ? signed : null;
  // Places that fold take no round's wait, which ends at the deadline: past it, they end here too
  // (one whose signing the deadline stopped is recorded failed, as at the end of a round's wait).
  if (attempt.claim?.folded && deadline?.signal.aborted && !unbuilt) throw notReservedInTime();
  const { requestEntry, projectEntry, senderEntry, newPolicy, recipientEntry, playerEntry } =
    reservationEntries(request, entries);
  // A key forgotten (its failed record expired) is new again; its leftovers are replaced.
  const leftover = requestEntry.value;
  const stored = liveTxRequest(leftover, ctx.clock.now());
  // This call's own commit applied though its answer was lost (checked against the key then).
  if (stored && stored.attemptId === state.tried) {
    return { kind: "reserved", entry: requestEntry as Deno.KvEntry<TxRequestRecord>, unbuilt };
  }
  // Step 1 again: revoked, deleted or no longer on the team since the checks.
  checkSender(projectEntry.value, senderEntry.value, request.sender);
  // Step 7 again: another request with this key may have reserved it since.
  if (stored) {
    if (!isSameRequest(stored, { kind: request.kind, body: request.input.body })) {
      throw idempotencyConflict();
    }
    if (stored.status !== "failed") return { kind: "existing", record: stored };
    const proof = state.proofs.get(stored.attemptId);
    if (proof === undefined) return { kind: "prove", record: stored };
    if (proof.kind === "landed") {
      const confirmed = await confirmLandedAttempt(
        ctx,
        requestEntry as Deno.KvEntry<TxRequestRecord>,
        proof.signature,
      );
      return confirmed ? { kind: "existing", record: confirmed } : { kind: "conflict" };
    }
    if (proof.kind === "unproven") {
      log("warn", "Retry refused: the earlier attempt may still land", {
        projectId,
        idempotencyKey: key,
        attempt: stored.attempt,
        signature: stored.signature,
      });
      return { kind: "existing", record: stored };
    }
  }
  // Steps 9 to 13 again by a policy saved since the checks: it binds at once.
  if (newPolicy) return { kind: "policy", entry: newPolicy };
  const now = ctx.clock.now();
  const op = ctx.kv.atomic().check(...entries);
  const places = attempt.claim;
  const folded = places?.folded === true && addFoldedPlaces(op, limitNeed(request), {
    projectId,
    entries: ledgers!,
    holder: ctx.tx.allowances.holder,
    at: places.at,
  });
  if (places?.folded && !folded) return { kind: "round" };
  if (attempt.quota && !attempt.quota.add(op, counters!, now)) return { kind: "round" };
  // The time of the places taken: every window counts the payout from it, and gives it back
  // to the bucket of that time.
  const at = places?.at ?? now;
  const recipient = pruneWindow(recipientEntry.value, at - HOUR_WINDOW_MS);
  const player = playerEntry ? pruneWindow(playerEntry.value, at - HOUR_WINDOW_MS) : null;
  // A withdrawal counts in no window (`limits.ts`): they are read and checked, left unchanged.
  if (places) checkLimits(request, { recipient, player, claim: places });

  state.tried = attemptId;
  const timing = ctx.tx.timing;
  // First due when the route's wait is over; an unsigned attempt is abandoned once past signBy.
  const checkJobId = addTxJob(op, { type: "tx_confirm", projectId, key, attemptId }, {
    runAt: now + timing.confirmWaitMs + timing.confirmIntervalMs,
  });
  const record = applyEvent(stored, {
    type: "reserve",
    attempt: {
      projectId,
      key,
      kind: request.kind,
      cluster: request.project.cluster,
      body: request.input.body,
      attemptId,
      recipient: request.recipient,
      recipientUserId: request.recipientUserId,
      signature: signed?.kind === "signed" ? signed.signature : null,
      usage: {
        at,
        asset: request.asset,
        amount: request.amount,
        recipient: request.recipient,
        userId: request.recipientUserId,
      },
      signed: signed?.kind === "signed" ? signed.tx : null,
      signBy: now + timing.answerWithinMs,
      checkJobId,
      ...("member" in request.sender ? { requestedBy: request.sender.member } : {}),
    },
  }, now);
  // Unreachable: only a new key or a failed one gets here, and the table lists both.
  if (!record) throw new Error("Cannot reserve the transaction request: not new nor failed");
  op.set(requestEntry.key, record);
  addSenderMove(op, request.sender, senderEntry, record);
  if (leftover) op.delete(txAttemptByTimeKey(projectId, leftover.attemptId));
  op.set(txAttemptByTimeKey(projectId, attemptId), key);
  addTxStatusMove(op, leftover, record);
  op.set(txUnsettledKey(projectId, key), { attemptId, since: now } satisfies TxUnsettledRef);
  if (places) {
    op.set(recipientEntry.key, addToWindow(recipient, at), { expireIn: 2 * HOUR_WINDOW_MS });
    if (playerEntry && player) {
      op.set(playerEntry.key, addToWindow(player, at), { expireIn: 2 * HOUR_WINDOW_MS });
    }
  }
  const result = await op.commit();
  // Deno's client sends again a write whose answer was lost, and that one fails its checks: a
  // commit that counted the request or its places is looked for, or both would be counted again.
  const versionstamp = result.ok
    ? result.versionstamp
    : (attempt.quota || folded) && await appliedAt(ctx, requestEntry.key, attemptId);
  if (!versionstamp) return { kind: "conflict" };
  attempt.quota?.committed(versionstamp);
  return {
    kind: "reserved",
    entry: { key: requestEntry.key, value: record, versionstamp },
    unbuilt,
  };
}

/** The versionstamp of the commit that reserved `attemptId` under `key`, if one did. */
async function appliedAt(
  ctx: TxContext,
  key: Deno.KvKey,
  attemptId: string,
): Promise<string | null> {
  const entry = await ctx.kv.get<TxRequestRecord>(key);
  return entry.value?.attemptId === attemptId ? entry.versionstamp : null;
}

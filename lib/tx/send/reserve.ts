/**
 * Steps 12 and 13, the daily cap on failures, and the reservation. The project-wide limits (the
 * day's count, the asset's budget, the cap on failures) are places the payout takes first from its
 * instance's leased blocks (`allowance.ts`, which says why they stay exact); the reservation is one
 * atomic commit of the key record with the recipient's and the player's windows, all checked by
 * versionstamp.
 *
 * | Concern        | Rule                                                                         |
 * | -------------- | ---------------------------------------------------------------------------- |
 * | Exact          | Concurrent requests can never together pass a limit, and of concurrent       |
 * |                | requests with one key only one reserves it. A reservation that does not      |
 * |                | commit gives its places back. A conflict re-reads and re-checks (steps 1 and |
 * |                | 7 included).                                                                 |
 * | No queue       | A payout's commit touches no record of the project's shared by other         |
 * |                | payouts, so a round end's payouts of one project neither queue nor conflict; |
 * |                | payouts to one recipient or player take turns in an instance                 |
 * |                | (`window_turns.ts`) and meet across instances through the checks.            |
 * | Crash: places  | Places from blocks are granted (a commit) before the reservation: an         |
 * |                | instance that dies between the two leaves them counted (its block counts     |
 * |                | whole until it leaves the window), so the limits may refuse early by them,   |
 * |                | never late; nothing is paid without its reservation.                         |
 * | Crash: signing | A single payout's transaction is signed before the reservation and stored by |
 * |                | its commit, the one commit before the send. Dying before it leaves nothing   |
 * |                | stored and nothing sent (the signed bytes were only in memory); dying after  |
 * |                | it leaves an attempt with its signed bytes, which counts as sent and which   |
 * |                | its check job follows (resends, lands or proves dead) as if the route had    |
 * |                | sent it. A batch's items are reserved unsigned and their shared transaction  |
 * |                | stored after (`send_and_wait.ts`).                                           |
 * | Revoked        | The commit is also checked on the project's record, the API key's and the    |
 * |                | policy: a deletion, a revocation or a policy saved before it fails it, and   |
 * |                | the next round finds the key unusable (401), or judges the request by the    |
 * |                | new policy (`checkPolicyAgain`) and takes its places again. So no payout is  |
 * |                | reserved with a key after its revocation or its project's deletion was       |
 * |                | answered, nor past a policy after its save was, on any instance, whatever    |
 * |                | the key cache holds.                                                         |
 * | Retry          | A retry of a `failed` key reserves a new attempt only once the earlier       |
 * |                | attempt is proven dead (`retry_proof.ts`, made before places are taken since |
 * |                | it reads the chain); the commit is checked on the record that proof was made |
 * |                | for. The new attempt gets its background check job in the same commit, so    |
 * |                | even an attempt whose instance dies before signing is abandoned on time by   |
 * |                | whichever instance runs that job.                                            |
 */
import { CommitConflictError } from "../../../core/commit_retry.ts";
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
import { checkPolicyAgain } from "../request/policy_steps.ts";
import { idempotencyConflict } from "../request/check_steps.ts";
import { addSenderMove, checkSender } from "../request/sender.ts";
import { inWindowTurn } from "../request/window_turns.ts";
import { proveEarlierAttempt } from "../follow/retry_proof.ts";
import { confirmLandedAttempt } from "../record/found_landed.ts";
import { applyEvent } from "../lifecycle/apply_event.ts";
import { addFoldedPlaces } from "../allowance/allowance_fold.ts";
import { type Deadline, notReservedInTime } from "../rpc/timing.ts";
import type { AllowanceClaim } from "../allowance/allowance_grant.ts";
import {
  type Attempt,
  newAttempt,
  readReservation,
  reservationEntries,
  type ReserveOptions,
  type ReserveOutcome,
  type ReserveRound,
  type ReserveState,
  takePlaces,
} from "./reserve_inputs.ts";

const MAX_ROUNDS = 200;

/**
 * Runs steps 12 and 13 and reserves the key with the new attempt's usage, in rounds of one commit
 * each until one answers an outcome. A round, in the request's turn on its windows: its places
 * taken from blocks (kept for the next round when its commit only lost to a concurrent change), or,
 * for a project paying now and then here, counted by the commit itself (`allowance_fold.ts`), then
 * its commit. Between rounds, as the last one found: a failed key's last attempt proven dead (it
 * reads the chain, so no places are held meanwhile, and a new attempt is signed for the retry), a
 * policy saved since the checks judged (its places taken again), places that do not fold taken from
 * a round, or a short back-off before reading everything again. The quota's verdict, the places,
 * the transaction's signing and the read of the records the commit checks go on side by side; the
 * commit waits for all of them.
 */
export async function reserveTxRequest(
  ctx: TxContext,
  checked: CheckedRequest,
  options: ReserveOptions = {},
): Promise<ReserveOutcome> {
  const state: ReserveState = { tried: null, proofs: new Map() };
  let request = checked;
  const previous = liveTxRequest(request.previous.value, ctx.clock.now());
  let unproven = previous?.status === "failed" ? previous : null;
  let attempt: Pick<Attempt, "attemptId" | "signed"> | null = null;
  // Places taken and not yet used or given back; undefined when none are held.
  let claim: AllowanceClaim | null | undefined;
  // Places may be counted by the commit itself, until a round of it lost or they did not fit.
  let fold = true;
  // The next round reads every record the commit checks, not only those the checks did not.
  let readAll = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    if (unproven) {
      state.proofs.set(
        unproven.attemptId,
        await proveEarlierAttempt(ctx, unproven, options),
      );
      unproven = null;
      attempt = null;
    }
    const { attemptId, signed } = attempt ??= newAttempt(ctx, options);
    const first = !readAll;
    let outcome: ReserveRound;
    try {
      outcome = await inWindowTurn(ctx, request, options.deadline, async () => {
        const read = readReservation(ctx, request, { first });
        // Awaited by the commit; a request refused before it must not leave it unheard.
        read.catch(() => {});
        await options.admission?.verdict();
        claim ??= await takePlaces(ctx, request, { ...options, fold });
        const attempt = { attemptId, signed, claim, read };
        return await commitReservation(ctx, request, state, attempt, options.deadline);
      });
    } catch (error) {
      claim?.release();
      throw error;
    }
    // Places from blocks wait for the next round when the commit only lost; folded ones do not.
    const folded = claim?.folded === true;
    const keep = outcome.kind === "conflict" && !folded;
    if (outcome.kind === "reserved") claim?.commit();
    else if (!keep) claim?.release();
    if (!keep) claim = undefined;
    // Places that did not fold, or whose fold lost its commit, come from a round from now on.
    if (outcome.kind === "round" || (outcome.kind === "conflict" && folded)) fold = false;
    readAll = outcome.kind === "conflict";
    switch (outcome.kind) {
      case "reserved":
      case "existing":
        return outcome;
      case "prove":
        unproven = outcome.record;
        break;
      case "policy":
        request = checkPolicyAgain(request, outcome.entry);
        break;
      case "round":
        break;
      case "conflict":
        // Another payout or instance changed one of these records: back off a little.
        await new Promise((resolve) =>
          setTimeout(resolve, Math.random() * Math.min(50, 2 + round))
        );
        break;
    }
  }
  claim?.release();
  throw new CommitConflictError("reserve the transaction request");
}

/**
 * One round's checks again on what it read, and its commit: the `reserve` event applied to the
 * key's record (`lifecycle.ts`) with the attempt's windows, indexes and confirmation job, checked
 * against every record read.
 */
async function commitReservation(
  ctx: TxContext,
  request: CheckedRequest,
  state: ReserveState,
  attempt: Attempt,
  deadline: Deadline | undefined,
): Promise<ReserveRound> {
  const projectId = request.project.id;
  const key = request.input.idempotencyKey;
  const { attemptId } = attempt;
  const [{ entries, ledgers }, signed] = await Promise.all([attempt.read, attempt.signed()]);
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
  if (!result.ok) return { kind: "conflict" };
  return {
    kind: "reserved",
    entry: { key: requestEntry.key, value: record, versionstamp: result.versionstamp },
    unbuilt,
  };
}

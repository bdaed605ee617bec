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
import { liveTxRequest } from "../../../kv/tx_requests.ts";
import type { CheckedRequest } from "../request/checks.ts";
import { checkPolicyAgain } from "../request/policy_steps.ts";
import { inWindowTurn } from "../request/window_turns.ts";
import { proveEarlierAttempt } from "../follow/retry_proof.ts";
import type { AllowanceClaim } from "../allowance/allowance_grant.ts";
import type { AdmissionFold } from "../../quota/admission.ts";
import { commitReservation } from "./reserve_commit.ts";
import {
  type Attempt,
  newAttempt,
  readReservation,
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
    // A quiet project's request is counted by this round's commit, if it makes one.
    let quota: AdmissionFold | null = null;
    try {
      outcome = await inWindowTurn(ctx, request, options.deadline, async (waited) => {
        quota = options.admission?.takeFold() ?? null;
        // What the checks read ahead is older than the commit of a payout this one waited for.
        const ahead = first && !waited ? request.ahead : null;
        const read = readReservation(ctx, request, { first, ahead, quota: quota?.key ?? null });
        // Awaited by the commit; a request refused before it must not leave it unheard.
        read.catch(() => {});
        if (!quota) await options.admission?.verdict();
        claim ??= await takePlaces(ctx, request, { ...options, fold });
        const attempt = { attemptId, signed, claim, read, quota };
        return await commitReservation(ctx, request, state, attempt, options.deadline);
      });
    } catch (error) {
      claim?.release();
      throw error;
    } finally {
      // Not counted by the round's commit: a quota round counts it.
      (quota as AdmissionFold | null)?.release();
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

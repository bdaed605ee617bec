/**
 * Paying a reward: its payment is a payout sent by the reward (`lib/tx/request/sender.ts`) under the key
 * `reward:<key>` to `{ userId }`, through the payout's path from step 5 on (the same checks,
 * policy, limits, reservation, send and events; `lib/tx/handle_request.ts`). So it pays at most
 * once whatever runs it, on whatever instance, how many times: the route of a grant, the reward's
 * job, a link's. The wallet is the one linked when its payment is reserved.
 *
 * What a refusal before the reservation means for the reward (its `wait`):
 * - no wallet linked: it waits for one (a link's job pays it, `jobs.ts`);
 * - the day's quota, a window or a budget full: it waits for room, tried again later;
 * - anything else (a check the policy now refuses, the RPC): tried again later, with the error.
 * A payment that fails releases the reward (nothing reached the player): tried again later, until
 * it expires. One that confirms credits it. Both moves are made by the payment's settlement, in its
 * commit (`lib/tx/record/reward_settlement.ts`); a turn makes them only for a payment a previous
 * release's instance settled without them.
 */
import { ApiError } from "../../core/api_error.ts";
import type { TxRouteKind } from "../../core/events.ts";
import { type ApiErrorCode } from "../../core/error_codes.ts";
import { isHolding, rewardKey, type RewardRecord, rewardTxKey } from "../../kv/rewards.ts";
import { liveTxRequest, txRequestKey, type TxRequestRecord } from "../../kv/tx_requests.ts";
import type { Admission } from "../quota/admission.ts";
import { checkTxRequest } from "../tx/request/checks.ts";
import { reserveAndSend } from "../tx/handle_request.ts";
import type { RewardEvent } from "../tx/lifecycle/lifecycle.ts";
import { paymentSettledEvent } from "../tx/lifecycle/lifecycle_rewards.ts";
import { RewardNotPayableError } from "../tx/request/sender.ts";
import type { TxContext } from "../tx/runtime.ts";
import type { Deadline } from "../tx/rpc/timing.ts";
import { moveReward, type RewardRef } from "./moves.ts";

/** Where a reward stands after a turn of `payReward`. */
type PayOutcome =
  /** Paid, cancelled, expired or unknown; or held for a wallet (a link wakes it). */
  | { kind: "settled"; reward: RewardRecord | null }
  /** Its payment is on its way: look again later. */
  | { kind: "open"; reward: RewardRecord }
  /** Held for room or a retry: try again later. */
  | { kind: "waiting"; reward: RewardRecord };

/** The refusals that mean "no room in the limits now". */
const ROOM_CODES: ReadonlySet<ApiErrorCode> = new Set([
  "daily_tx_quota_exceeded",
  "recipient_rate_limited",
  "player_rate_limited",
  "hourly_budget_exceeded",
  "daily_failed_tx_quota_exceeded",
]);

// Rounds of one turn: a payment sent, then followed to its end, with a lost race or two.
const MAX_ROUNDS = 6;

/**
 * Takes the reward one turn on: pays a held one (or expires it past its time), follows a paying
 * one's payment, and answers where it stands. `deadline` bounds the payment's RPC calls and wait.
 */
export async function payReward(
  ctx: TxContext,
  ref: RewardRef,
  options: { deadline: Deadline; admission?: Admission | undefined },
): Promise<PayOutcome> {
  let last: RewardRecord | null = null;
  let sent = false;
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const [entry, paymentEntry] = await ctx.kv.getMany<[RewardRecord, TxRequestRecord]>([
      rewardKey(ref.projectId, ref.key),
      txRequestKey(ref.projectId, rewardTxKey(ref.key)),
    ]);
    const reward = last = entry.value;
    if (!reward || !isHolding(reward)) return { kind: "settled", reward };
    const now = ctx.clock.now();
    const payment = liveTxRequest(paymentEntry.value, now);
    const follow = paymentSettledEvent(reward, payment, now);
    if (follow) {
      const moved = await moveReward(
        ctx,
        ref,
        (r, p) => paymentSettledEvent(r, p, ctx.clock.now()),
      );
      // Released after a failed payment: tried again later, not at once.
      if (moved.reward?.status === "held") return { kind: "waiting", reward: moved.reward };
      continue;
    }
    if (reward.status === "paying") return { kind: "open", reward };
    // Released by the failure of the payment this turn sent: tried again later, not at once.
    if (sent) return { kind: "waiting", reward };
    if (now >= reward.expiresAt) {
      await moveReward(ctx, ref, () => ({ type: "expire" }));
      continue;
    }
    try {
      await sendPayment(ctx, ref.projectId, reward, options);
      sent = true;
    } catch (error) {
      if (error instanceof RewardNotPayableError) continue;
      if (!(error instanceof ApiError)) throw error;
      // The project was deleted: nothing will ever pay it.
      if (error.code === "project_not_found") return { kind: "settled", reward };
      const wait = waitOf(error);
      const moved = await moveReward(ctx, ref, () => wait);
      if (moved.linked) continue;
      const held = moved.reward;
      if (!held || held.status !== "held") continue;
      return held.waitingFor === "wallet"
        ? { kind: "settled", reward: held }
        : { kind: "waiting", reward: held };
    }
  }
  if (!last) return { kind: "settled", reward: null };
  return last.status === "held"
    ? { kind: "waiting", reward: last }
    : { kind: "open", reward: last };
}

/** Sends the reward's payment, or finds it sent: the payout's path from step 5 on. */
async function sendPayment(
  ctx: TxContext,
  projectId: string,
  reward: RewardRecord,
  options: { deadline: Deadline; admission?: Admission | undefined },
): Promise<void> {
  const input = {
    idempotencyKey: rewardTxKey(reward.key),
    body: { to: { userId: reward.userId }, mint: reward.mint, amount: reward.amount },
  };
  const caller = { projectId, reward: reward.key };
  const kind = reward.kind as TxRouteKind;
  const checked = await checkTxRequest(ctx, caller, kind, input, options);
  if (checked.kind === "existing") return;
  await reserveAndSend(ctx, checked.request, options);
}

/** The wait a refusal of the payment before its reservation means. */
function waitOf(error: ApiError): Extract<RewardEvent, { type: "wait" }> {
  if (error.code === "wallet_not_linked") {
    return { type: "wait", waitingFor: "wallet", error: null };
  }
  const waitingFor = ROOM_CODES.has(error.code) ? "room" : "retry";
  return { type: "wait", waitingFor, error: error.message };
}

/**
 * A reward's own events of the lifecycle (the table and its header are `lifecycle.ts`'s) applied
 * to its record, with the `reward_*` events they record: the callers (`lib/rewards/moves.ts`, the
 * reservation through `sender.ts`, and its payment's settlement through
 * `lib/tx/record/reward_settlement.ts`) commit the result checked against the reward they read.
 */
import type { ServiceEvent } from "../../../core/events.ts";
import type { RewardRecord } from "../../../kv/rewards.ts";
import type { TxRequestRecord } from "../../../kv/tx_requests.ts";
import { type RewardEvent, type StateName, stateName, stateOf, TRANSITIONS } from "./lifecycle.ts";

/**
 * The table's state of a reward: its own status while held, cancelled or expired, else its
 * payment's (`payment`: the record of `reward:<key>`; a paid reward's is confirmed).
 */
export function rewardStateOf(reward: RewardRecord, payment: TxRequestRecord | null): StateName {
  if (reward.status === "held" || reward.status === "cancelled" || reward.status === "expired") {
    return reward.status;
  }
  if (reward.status === "paid" || !payment) {
    return reward.status === "paid" ? "confirmed" : "reserved";
  }
  return stateName(stateOf(payment));
}

/**
 * The reward after `event` at `now`, or null when the table lists no such move from its state
 * (or the move would change nothing). The caller commits it checked against the reward it read.
 */
export function applyRewardEvent(
  reward: RewardRecord,
  payment: TxRequestRecord | null,
  event: RewardEvent,
  now: number,
): RewardRecord | null {
  if (!TRANSITIONS[rewardStateOf(reward, payment)][event.type]) return null;
  const ended = { waitingFor: null, settledAt: now };
  switch (event.type) {
    case "pay":
      return { ...reward, status: "paying", waitingFor: null, recipient: event.recipient };
    case "wait":
      if (reward.waitingFor === event.waitingFor && reward.error === event.error) return null;
      return { ...reward, waitingFor: event.waitingFor, error: event.error };
    case "cancel":
      return { ...reward, ...ended, status: "cancelled" };
    case "expire":
      return { ...reward, ...ended, status: "expired" };
    case "release":
      return { ...reward, status: "held", waitingFor: "retry", error: event.error };
    case "credit":
      // A paid reward's state is its payment's, confirmed: credited once.
      if (reward.status === "paid") return null;
      return {
        ...reward,
        ...ended,
        status: "paid",
        recipient: event.recipient,
        signature: event.signature,
        error: null,
      };
  }
}

/**
 * The event a reward's settled payment applies to it: credit once it confirmed; once it failed,
 * release (or expire, past its time); none while it is on its way or there is none.
 */
export function paymentSettledEvent(
  reward: RewardRecord,
  payment: TxRequestRecord | null,
  now: number,
): RewardEvent | null {
  if (!payment) return null;
  if (payment.status === "confirmed") {
    return { type: "credit", recipient: payment.recipient, signature: payment.signature! };
  }
  if (payment.status !== "failed" || reward.status !== "paying") return null;
  return now >= reward.expiresAt
    ? { type: "expire" }
    : { type: "release", error: payment.error ?? "The payment failed" };
}

/**
 * The reward events a move from `before` to `next` records: none but for a first wait, a cancel,
 * an expiry, a credit.
 */
export function rewardEventsOf(
  before: RewardRecord,
  next: RewardRecord,
  event: RewardEvent,
): ServiceEvent[] {
  const fields = rewardEventFields(next);
  switch (event.type) {
    case "wait":
      // Its first wait: granted to a linked player, its payment refused at once.
      return before.waitingFor === null ? [heldEventOf(next)] : [];
    case "cancel":
      return [{ type: "reward_cancelled", ...fields }];
    case "expire":
      return [{ type: "reward_expired", ...fields }];
    case "credit":
      return [{
        type: "reward_paid",
        ...fields,
        address: event.recipient,
        signature: event.signature,
      }];
    default:
      return [];
  }
}

/** The `reward_held` event of a reward. */
export function heldEventOf(reward: RewardRecord): ServiceEvent {
  return { type: "reward_held", ...rewardEventFields(reward), expiresAt: reward.expiresAt };
}

function rewardEventFields(reward: RewardRecord) {
  return {
    key: reward.key,
    userId: reward.userId,
    kind: reward.kind as "transfer-sol" | "transfer-token" | "mint-token",
    mint: reward.mint,
    amount: reward.amount,
  };
}

/**
 * A reward's own events of the lifecycle (the table and its header are `lifecycle.ts`'s) applied
 * to its record: the callers (`lib/rewards/moves.ts`, and the reservation through `sender.ts`)
 * commit the result checked against the reward they read.
 */
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

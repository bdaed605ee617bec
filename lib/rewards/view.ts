/** A reward as the game API answers it (`routes/v1/answers.ts`, `rewardAnswer`). */
import { type RewardRecord, rewardTxKey } from "../../kv/rewards.ts";

/** The Reward object of the `/v1/rewards` routes. */
export function rewardView(reward: RewardRecord) {
  return {
    key: reward.key,
    userId: reward.userId,
    kind: reward.kind,
    mint: reward.mint,
    amount: reward.amount,
    status: reward.status,
    waitingFor: reward.waitingFor,
    recipient: reward.recipient,
    signature: reward.signature,
    txKey: rewardTxKey(reward.key),
    error: reward.error,
    createdAt: reward.createdAt,
    expiresAt: reward.expiresAt,
    settledAt: reward.settledAt,
  };
}

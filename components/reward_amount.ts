/** How the linking page and the dashboard write a reward's amount. */
import type { RewardRecord } from "../kv/rewards.ts";
import type { TokenLabel } from "../lib/chain/token_labels.ts";
import { shortAddress } from "./dashboard/format.ts";
import { tokenAmountText } from "./dashboard/token_amount.tsx";

/**
 * `0.5 SOL`, `10 GEM` (the mint's symbol), `10 of 5Vg7…sMmc (2 decimals)` without one, or
 * `10 of 5Vg7…sMmc` when the mint could not be read.
 */
export function rewardAmountText(
  reward: Pick<RewardRecord, "amount" | "mint">,
  label: TokenLabel | undefined,
): string {
  if (!reward.mint) return `${reward.amount} SOL`;
  if (!label) return `${reward.amount} of ${shortAddress(reward.mint)}`;
  const { symbol, decimals } = label;
  return tokenAmountText({ amount: reward.amount, mint: reward.mint, symbol, decimals });
}

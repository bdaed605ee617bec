/**
 * The player's rewards as the linking page shows them (`islands/_link_rewards.tsx`): amounts named
 * as the dashboard names them (`10 GEM`, or the shortened mint), payments linked to the explorer of
 * the project's cluster. Cancelled and expired rewards are not the player's any more: not shown.
 */
import type { AppContext } from "../../lib/context.ts";
import type { Project } from "../../kv/projects.ts";
import { listRewardsOfPlayer, type RewardRecord } from "../../kv/rewards.ts";
import { readTokenLabels } from "../../lib/projects/wallet.ts";
import { explorerTxUrl } from "../../components/dashboard/format.ts";
import { rewardAmountText } from "../../components/reward_amount.ts";
import type { LinkRewardView } from "../../islands/_link_rewards.tsx";

function stateOf(reward: RewardRecord): LinkRewardView["state"] {
  if (reward.status === "paid") return "sent";
  return reward.status === "held" && reward.waitingFor === "wallet" ? "waiting" : "sending";
}

/** The player's rewards, newest first, as the linking page shows them. */
export async function readLinkRewards(
  ctx: AppContext,
  project: Project,
  userId: number,
): Promise<LinkRewardView[]> {
  const rewards = (await listRewardsOfPlayer(ctx.kv, project.id, userId))
    .filter((reward) => reward.status !== "cancelled" && reward.status !== "expired");
  const mints = rewards.flatMap((reward) => reward.mint ? [reward.mint] : []);
  const labels = mints.length > 0 ? await readTokenLabels(ctx, project, mints) : new Map();
  const rpcUrl = ctx.config.rpcUrls[project.cluster];
  return rewards.map((reward) => ({
    key: reward.key,
    amount: rewardAmountText(reward, reward.mint ? labels.get(reward.mint) : undefined),
    mint: reward.mint,
    state: stateOf(reward),
    expiresAt: reward.expiresAt,
    settledAt: reward.settledAt,
    explorerUrl: reward.status === "paid" && reward.signature
      ? explorerTxUrl(project.cluster, rpcUrl, reward.signature)
      : null,
  }));
}

/**
 * A player's rewards on the players page, when the search is a Roblox user ID: held ones (and why
 * they wait), paid ones with their payment, cancelled and expired ones. For answering a player who
 * asks where their reward is, linked or not.
 */
import type { ComponentChildren, VNode } from "preact";
import type { TokenLabel } from "../../lib/chain/token_labels.ts";
import type { Cluster } from "../../core/cluster.ts";
import type { RewardRecord } from "../../kv/rewards.ts";
import type { PlayerRewardList } from "../../lib/projects/rewards.ts";
import { rewardAmountText } from "../reward_amount.ts";
import { Cell } from "./cell.tsx";
import { explorerTxUrl, formatTime } from "./format.ts";

const WAITS: Record<string, string> = {
  wallet: "held until they link a wallet",
  room: "held until the project's limits have room",
  retry: "held: its payment failed, tried again",
};

/** A reward's status in words: why a held one waits. */
function rewardStatusText(reward: RewardRecord): string {
  if (reward.status === "held") return WAITS[reward.waitingFor ?? "wallet"] ?? "held";
  if (reward.status === "paying") return "being paid";
  return reward.status;
}

/** A reward's key and amount cells, and its status cell's text: why a held one waits, the error. */
export function RewardCells(
  { reward, labels, children }: {
    reward: RewardRecord;
    labels: Map<string, TokenLabel>;
    children?: ComponentChildren;
  },
): VNode {
  return (
    <>
      <Cell label="Key" mono>{reward.key}</Cell>
      <Cell label="Amount">
        <span title={reward.mint ?? undefined}>
          {rewardAmountText(reward, labels.get(reward.mint ?? ""))}
        </span>
      </Cell>
      <Cell label="Status">
        {rewardStatusText(reward)}
        {reward.error && <div class="muted">{reward.error}</div>}
        {children}
      </Cell>
    </>
  );
}

/** The player's rewards as a table; a line saying there are none otherwise. */
export function PlayerRewards(
  { data, cluster, rpcUrl }: { data: PlayerRewardList; cluster: Cluster; rpcUrl: string },
): VNode {
  return (
    <section class="card" aria-labelledby="player-rewards-heading">
      <h2 id="player-rewards-heading">Rewards of player {data.userId}</h2>
      {data.rewards.length === 0
        ? <p class="empty">Your game granted this player no reward.</p>
        : (
          <table class="list stack" data-testid="player-rewards">
            <thead>
              <tr>
                <th>Key</th>
                <th>Amount</th>
                <th>Status</th>
                <th>Granted</th>
                <th>Ends</th>
              </tr>
            </thead>
            <tbody>
              {data.rewards.map((reward) => (
                <tr key={reward.key}>
                  <RewardCells reward={reward} labels={data.labels}>
                    {reward.status === "paid" && reward.signature && (
                      <div>
                        <a href={explorerTxUrl(cluster, rpcUrl, reward.signature)}>Payment</a>
                      </div>
                    )}
                  </RewardCells>
                  <Cell label="Granted">{formatTime(reward.createdAt)}</Cell>
                  <Cell label="Ends">
                    {reward.settledAt !== null
                      ? formatTime(reward.settledAt)
                      : `expires ${formatTime(reward.expiresAt)}`}
                  </Cell>
                </tr>
              ))}
            </tbody>
          </table>
        )}
    </section>
  );
}

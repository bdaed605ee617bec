/**
 * The minute cron's repair of rewards waiting for a wallet whose player has one. Every link made
 * by this version adds the job that pays them (`lib/link/linking.ts`), but a link made by an
 * instance of the version before rewards (during a rolling deploy) adds none, and those rewards
 * would wait for the player's next link. No other path leaves such a reward: a grant and a wait for
 * a wallet both commit only while the player has no link, checked. So this sweep lists the players
 * holding rewards (`reward_holds`), reads their links in batches, and adds the link's job for each
 * linked one who still has a reward waiting for a wallet; a job added twice pays nothing twice.
 */
import { log } from "../../core/log.ts";
import { getLinksByUsers } from "../../kv/links.ts";
import { listRewardsOfPlayer } from "../../kv/rewards.ts";
import { addLinkJob } from "../link/job_payloads.ts";
import type { TxContext } from "../tx/runtime.ts";

/** Players holding rewards one sweep looks at, at most. */
const MAX_PLAYERS_PER_SWEEP = 10_000;

/** Adds the link's job for linked players with rewards waiting for a wallet; answers how many. */
export async function payRewardsOfLinkedPlayers(ctx: TxContext): Promise<number> {
  const holders = new Map<string, number[]>();
  const iter = ctx.kv.list({ prefix: ["reward_holds"] }, { limit: MAX_PLAYERS_PER_SWEEP });
  for await (const entry of iter) {
    const [, projectId, userId] = entry.key as [string, string, number];
    holders.set(projectId, [...holders.get(projectId) ?? [], userId]);
  }
  let repaired = 0;
  for (const [projectId, userIds] of holders) {
    const links = await getLinksByUsers(ctx.kv, projectId, userIds);
    for (const userId of userIds) {
      if (!links.get(userId)) continue;
      const rewards = await listRewardsOfPlayer(ctx.kv, projectId, userId, Infinity);
      if (!rewards.some((r) => r.status === "held" && r.waitingFor === "wallet")) continue;
      const op = ctx.kv.atomic();
      addLinkJob(op, { type: "rewards_on_link", projectId, userId }, { runAt: ctx.clock.now() });
      if (!(await op.commit()).ok) continue;
      repaired++;
      log("warn", "Rewards of a linked player found waiting for a wallet", { projectId, userId });
    }
  }
  if (repaired > 0) ctx.jobWaker.wake();
  return repaired;
}

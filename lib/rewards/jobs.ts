/**
 * The handlers of the reward job kinds (`job_payloads.ts`, and the link's `rewards_on_link`,
 * `lib/link/job_payloads.ts`). Every reward that holds has a job that takes it on: its payment's
 * turn (`reward_pay`, while it pays or waits for room or a retry), its expiry (`reward_expire`),
 * or, waiting for a wallet, the job its player's link adds. Each turn is idempotent (`pay.ts`), so
 * a job run twice, or two jobs of one reward, pay it once. A turn does not follow a payment on its
 * way: the payment's settlement credits or releases the reward in its own commit.
 */
import { log } from "../../core/log.ts";
import { isHolding, listRewardsOfPlayer } from "../../kv/rewards.ts";
import type { JobOutcome, JobRun } from "../job_handler.ts";
import type { RewardsOnLinkJob } from "../link/job_payloads.ts";
import type { TxContext } from "../tx/runtime.ts";
import { startDeadline } from "../tx/rpc/timing.ts";
import { addRewardJob, type RewardExpireJob, type RewardPayJob } from "./job_payloads.ts";
import { moveReward } from "./moves.ts";
import { payReward } from "./pay.ts";

/** The first wait of a reward for room or a retry; each next one doubles, up to `MAX_WAIT_MS`. */
const FIRST_WAIT_MS = 30_000;
const MAX_WAIT_MS = 10 * 60_000;
/** How often an expiry due while the reward's payment is on its way looks again. */
const EXPIRY_RECHECK_MS = 60_000;

/** One turn of a reward's payment; again later while it pays or waits for room or a retry. */
async function runRewardPayJob(run: JobRun<RewardPayJob, TxContext>): Promise<JobOutcome> {
  const { ctx, payload } = run;
  const outcome = await payReward(ctx, payload, { deadline: startDeadline(ctx.tx.timing) });
  const now = ctx.clock.now();
  switch (outcome.kind) {
    case "settled":
      return { kind: "done" };
    case "open":
      // Its payment's settlement moves the reward (`lib/tx/record/reward_settlement.ts`): the job
      // only looks again to retry one released meanwhile, after the first wait as after any
      // release, or to move one a previous release's instance settled without it.
      return { kind: "continue", at: now + FIRST_WAIT_MS, payload: { ...payload, waits: 0 } };
    case "waiting": {
      const waits = payload.waits + 1;
      const wait = Math.min(FIRST_WAIT_MS * 2 ** (waits - 1), MAX_WAIT_MS);
      log("info", "Reward waits", {
        ...run.logFields,
        reward: payload.key,
        waitingFor: outcome.reward.waitingFor,
        error: outcome.reward.error,
        retryInMs: wait,
      });
      // Never past its expiry: the turn then expires it.
      const at = Math.min(now + wait, Math.max(outcome.reward.expiresAt, now));
      return { kind: "continue", at, payload: { ...payload, waits } };
    }
  }
}

/** A reward's expiry: a held one expires; one whose payment is on its way is looked at again. */
async function runRewardExpireJob(run: JobRun<RewardExpireJob, TxContext>): Promise<JobOutcome> {
  const { ctx, payload } = run;
  const { reward } = await moveReward(
    ctx,
    payload,
    (held) => ctx.clock.now() >= held.expiresAt ? { type: "expire" } : null,
  );
  if (!reward || !isHolding(reward)) return { kind: "done" };
  const at = reward.status === "held" ? reward.expiresAt : ctx.clock.now() + EXPIRY_RECHECK_MS;
  return { kind: "continue", at: Math.max(at, ctx.clock.now()) };
}

/** Payment turns one round of a link's job adds (each is a few mutations of its commit). */
const LINK_ROUND_REWARDS = 100;

/**
 * A player linked: a payment turn for each of their rewards waiting for a wallet, oldest first, in
 * rounds of `LINK_ROUND_REWARDS` (a round's commit adds its turns; the next starts after them).
 */
async function runRewardsOnLinkJob(
  run: JobRun<RewardsOnLinkJob, TxContext>,
): Promise<JobOutcome> {
  const { ctx, payload } = run;
  const { after } = payload;
  const rewards = await listRewardsOfPlayer(ctx.kv, payload.projectId, payload.userId, Infinity);
  const waiting = rewards
    .filter((r) => r.status === "held" && r.waitingFor === "wallet")
    .filter((r) =>
      !after || r.createdAt > after.createdAt ||
      (r.createdAt === after.createdAt && r.key > after.key)
    )
    .sort((a, b) => a.createdAt - b.createdAt || (a.key < b.key ? -1 : 1));
  const round = waiting.slice(0, LINK_ROUND_REWARDS);
  for (const reward of round) {
    const job = { type: "reward_pay" as const, projectId: payload.projectId, key: reward.key };
    addRewardJob(run.op, { ...job, waits: 0 }, { runAt: run.now });
  }
  log("info", "Rewards to pay on a link", {
    ...run.logFields,
    userId: payload.userId,
    rewards: round.map((r) => r.key),
  });
  const wake = () => ctx.jobWaker.wake();
  const last = round.at(-1);
  if (waiting.length <= round.length || !last) return { kind: "done", afterCommit: wake };
  const next = { ...payload, after: { createdAt: last.createdAt, key: last.key } };
  return { kind: "continue", at: run.now, payload: next, afterCommit: wake };
}

/** Handlers of `reward_pay`, `reward_expire` and `rewards_on_link`. */
export const rewardJobHandlers = {
  reward_pay: runRewardPayJob,
  reward_expire: runRewardExpireJob,
  rewards_on_link: runRewardsOnLinkJob,
};

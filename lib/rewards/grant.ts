/**
 * `POST /v1/rewards`: a reward granted to a player by user id. Its checks, in the payout's order
 * where they apply (the first failure answers; quota, JSON and schema are the route's):
 *
 * | Check                                                              | As the payout's     |
 * | ------------------------------------------------------------------ | ------------------- |
 * | The API key again, on its record                                   | step 1, `sender.ts` |
 * | `mint` is an address (token rewards)                               | step 5              |
 * | The managed wallet exists                                          | step 6              |
 * | The key is new (or the same grant's), and so is its payment's key  | step 7              |
 * | The asset is allowed                                               | step 9              |
 * | The mint exists on the cluster                                     | step 10             |
 * | The amount is valid and within the per-transaction maximum         | step 11             |
 * | What the player holds of the asset stays within the policy's cap   | (rewards)           |
 *
 * The windows, budgets and daily quota are the payment's (`pay.ts`): a reward they refuse waits.
 * The reward is created in one commit checked on everything these read (the key, the project,
 * the API key, the policy, the player's link and holds), with its expiry job: a player not linked
 * then gets it `held` with its `reward_held` event, and a link after it finds it (the link's commit
 * is checked on the holds, `lib/link/linking.ts`). A linked player's is paid at once by this call
 * (`payReward`), with a `reward_pay` job in the same commit that pays it if this instance dies.
 */
import type { Address } from "@solana/kit";
import { ApiError } from "../../core/api_error.ts";
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { log } from "../../core/log.ts";
import { apiKeyKey } from "../../kv/api_keys.ts";
import { linkByUserKey } from "../../kv/links.ts";
import { emptyPolicy, policyKey, type TxPolicy } from "../../kv/policy.ts";
import { type Project, projectKey } from "../../kv/projects.ts";
import {
  addRewardCreation,
  rewardAsset,
  type RewardHolds,
  rewardHoldsKey,
  rewardKey,
  type RewardRecord,
  rewardTxKey,
} from "../../kv/rewards.ts";
import { txRequestKey } from "../../kv/tx_requests.ts";
import { parseUnits } from "../chain/amounts.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";
import { parseAddress } from "../chain/validation.ts";
import { commitWithEvents } from "../events/record.ts";
import { findMint, idempotencyConflict, parseAmount } from "../tx/request/check_steps.ts";
import { allowedMaximum, checkMaximum } from "../tx/request/policy_steps.ts";
import { findMintAllowance } from "../tx/request/policy.ts";
import type { TxContext } from "../tx/runtime.ts";
import { checkSender } from "../tx/request/sender.ts";
import type { Deadline } from "../tx/rpc/timing.ts";
import { addRewardJob } from "./job_payloads.ts";
import { heldEventOf } from "../tx/lifecycle/lifecycle_rewards.ts";
import { payReward } from "./pay.ts";
import { DAY_MS, isSameGrant, type RewardInput } from "./request_body.ts";

/** Grants a reward (or finds it granted); answers it as it stands once this call is done with it. */
export async function grantReward(
  ctx: TxContext,
  caller: { projectId: string; keyId: string },
  input: RewardInput,
  options: { deadline: Deadline },
): Promise<RewardRecord> {
  const { projectId } = caller;
  const created = await commitWithRetry("grant the reward", async () => {
    const entries = await ctx.kv.getMany([
      rewardKey(projectId, input.key),
      projectKey(projectId),
      apiKeyKey(projectId, caller.keyId),
      policyKey(projectId),
      linkByUserKey(projectId, input.userId),
      rewardHoldsKey(projectId, input.userId),
      txRequestKey(projectId, rewardTxKey(input.key)),
    ]);
    const [rewardEntry, projectEntry, keyEntry, policyEntry, linkEntry, holdsEntry, payment] =
      entries;
    checkSender(projectEntry.value as Project | null, keyEntry.value, { keyId: caller.keyId });
    const project = projectEntry.value as Project;
    const mintAddress = checkMint(input);
    if (!parseAddress(project.walletAddress ?? undefined)) {
      throw new ApiError("wallet_not_configured", "The project has no managed wallet");
    }
    const stored = rewardEntry.value as RewardRecord | null;
    if (stored) {
      if (!isSameGrant(stored, input)) throw idempotencyConflict();
      return { reward: stored, fresh: false };
    }
    // A payout sent before rewards existed under the key its payment would take.
    if (payment.value !== null) throw idempotencyConflict();
    const policy = (policyEntry.value as TxPolicy | null) ?? emptyPolicy();
    const units = await checkAmount(ctx, project, policy, mintAddress, input, options.deadline);
    const holds = holdsEntry as Deno.KvEntryMaybe<RewardHolds>;
    checkHoldCap(policy, input, holds.value, units);

    const now = ctx.clock.now();
    const linked = linkEntry.value !== null;
    const reward: RewardRecord = {
      key: input.key,
      userId: input.userId,
      kind: input.kind,
      mint: input.mint,
      amount: input.amount,
      units: units.amount.toString(),
      status: "held",
      // A linked player's is paid at once: it waits for nothing yet.
      waitingFor: linked ? null : "wallet",
      recipient: null,
      signature: null,
      error: null,
      createdAt: now,
      expiresAt: now + input.expiresInDays * DAY_MS,
      settledAt: null,
    };
    const op = ctx.kv.atomic().check(projectEntry, keyEntry, policyEntry, linkEntry);
    addRewardCreation(op, projectId, reward, holds);
    const key = input.key;
    addRewardJob(op, { type: "reward_expire", projectId, key }, { runAt: reward.expiresAt });
    if (linked) {
      const timing = ctx.tx.timing;
      addRewardJob(op, { type: "reward_pay", projectId, key, waits: 0 }, {
        runAt: now + timing.answerWithinMs + timing.abandonMarginMs,
      });
    }
    const events = linked ? [] : [heldEventOf(reward)];
    const committed = await commitWithEvents(ctx, op, { projectId, events });
    if (!committed.ok) return RETRY;
    log("info", "Reward granted", {
      projectId,
      reward: key,
      userId: input.userId,
      kind: input.kind,
      amount: input.amount,
      status: linked ? "paying" : "held",
    });
    return { reward, fresh: true };
  });
  if (!created.fresh || created.reward.waitingFor !== null) return created.reward;
  const outcome = await payReward(ctx, { projectId, key: input.key }, options);
  return outcome.reward ?? created.reward;
}

/** Step 5: a token reward's mint is an address (a SOL reward has none, by its schema). */
function checkMint(input: RewardInput): Address | null {
  if (input.kind === "transfer-sol") return null;
  const mint = parseAddress(input.mint ?? undefined);
  if (!mint) throw new ApiError("invalid_address", "mint is not a valid address");
  return mint;
}

/** Steps 9 to 11: the asset allowed, the mint on the cluster, the amount within the maximum. */
async function checkAmount(
  ctx: TxContext,
  project: Project,
  policy: TxPolicy,
  mintAddress: Address | null,
  input: RewardInput,
  deadline: Deadline,
): Promise<{ amount: bigint; decimals: number }> {
  const limitText = allowedMaximum(input.kind, policy, mintAddress);
  let decimals = SOL_DECIMALS;
  if (mintAddress) {
    const mint = await findMint(ctx, project, mintAddress, deadline);
    if (!mint) {
      throw new ApiError("invalid_mint", "The mint does not exist on the project's cluster");
    }
    decimals = mint.decimals;
  }
  const amount = parseAmount(input.amount, decimals);
  checkMaximum(limitText, amount, decimals);
  return { amount, decimals };
}

/** The policy's cap on what one player may have held of the asset (none when unset). */
function checkHoldCap(
  policy: TxPolicy,
  input: RewardInput,
  holds: RewardHolds | null,
  units: { amount: bigint; decimals: number },
): void {
  const capText = input.mint === null
    ? policy.maxHeldSolPerPlayer ?? null
    : findMintAllowance(policy, input.mint)?.maxHeldPerPlayer ?? null;
  if (capText === null) return;
  const cap = parseUnits(capText, units.decimals);
  if (cap === null) {
    throw new ApiError(
      "invalid_limit_config",
      `The held cap per player ${capText} cannot be represented with ${units.decimals} decimals`,
    );
  }
  const held = holds?.[rewardAsset(input)] ?? 0n;
  if (held + units.amount > cap) {
    throw new ApiError(
      "reward_hold_limit_exceeded",
      `The player would hold more than the policy's cap of ${capText} in unpaid rewards`,
    );
  }
}

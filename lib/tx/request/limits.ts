/**
 * Steps 12 and 13 of the transaction routes, then the daily cap on failures the service adds.
 * The project-wide ones (the day's count, the asset's budget, the cap on failures) are judged by
 * the allowance a payout takes from its instance's leased blocks (`allowance.ts`); the recipient's
 * and the player's on the windows the reservation read (`reserve.ts`), which commits them checked.
 * Either way concurrent requests on any instance can never together pass a limit. The cap on
 * failures comes after every check of the spec, so a request the spec refuses always gets the
 * spec's code.
 */
import { ApiError } from "../../../core/api_error.ts";
import { parseUnits } from "../../chain/amounts.ts";
import type { UsageWindow } from "../../../kv/tx_usage.ts";
import type { CheckedRequest } from "./checks.ts";
import { findAssetBudget } from "./policy.ts";
import type { AllowanceClaim, AllowanceNeed } from "../allowance/allowance_grant.ts";
import type { TxKind } from "../../../core/events.ts";

/**
 * False for a withdrawal: the owner's money leaving by the dashboard is outside the game policy's
 * limits and the service's daily caps, and takes no place in them (a withdrawal of a whole
 * balance must not hold a game's payouts back for an hour, nor a busy game's day stop its owner
 * from taking the money out).
 */
export function countsAgainstLimits(kind: TxKind): boolean {
  return kind !== "withdraw";
}

/** Transactions a project may have in a rolling 24 hours, failed ones excluded. */
export const MAX_TX_PER_DAY = 1_000;
/**
 * Attempts that failed after they were signed (refused in preflight, failed on-chain, expired),
 * per project in a rolling 24 hours: beyond it, 429 `daily_failed_tx_quota_exceeded`. Attempts
 * not settled yet count until they do, so concurrent requests can never pass it; as at most
 * `MAX_TX_PER_DAY` can be unsettled, at least 1,000 failures always fit, and a project that does
 * not fail never meets it. Failures before signing (502 `rpc_error` and `wallet_unavailable`,
 * abandoned attempts) are the service's or the node's doing, and do not count.
 */
export const MAX_FAILED_TX_PER_DAY = 2_000;

/** The reservation's windows, pruned to their hour (`player` only with a recipient player). */
interface LimitUsage {
  recipient: UsageWindow;
  player: UsageWindow | null;
  /** The project-wide places the payout took, and those it found no room for. */
  claim: AllowanceClaim;
}

/**
 * The asset's hourly budget in raw units: null without one, or a 422 when its text cannot be
 * represented with the asset's decimals (thrown at its place among the checks).
 */
function assetBudget(request: CheckedRequest): bigint | null | ApiError {
  const budgetText = findAssetBudget(request.policy, request.asset);
  if (budgetText === null) return null;
  return parseUnits(budgetText, request.decimals) ??
    new ApiError(
      "invalid_limit_config",
      `The hourly budget ${budgetText} cannot be represented with ${request.decimals} decimals`,
    );
}

/** The project-wide places `request` takes, and the limits they are held to. */
export function limitNeed(request: CheckedRequest): AllowanceNeed {
  const budget = assetBudget(request);
  return {
    asset: request.asset,
    amount: request.amount,
    limits: {
      day: BigInt(MAX_TX_PER_DAY),
      failed: BigInt(MAX_FAILED_TX_PER_DAY),
      asset: budget instanceof ApiError ? null : budget,
    },
  };
}

/** Throws the first limit `request` would pass: step 12, step 13, then the cap on failures. */
export function checkLimits(
  request: CheckedRequest,
  usage: LimitUsage,
): void {
  // Step 12.
  if (usage.claim.refused.has("day")) {
    throw new ApiError(
      "daily_tx_quota_exceeded",
      `The project already has ${MAX_TX_PER_DAY} transactions in the last 24 hours`,
    );
  }
  // Step 13: recipient, player, then the asset's budget.
  const { policy } = request;
  if (
    policy.perRecipientPerHour !== null &&
    usage.recipient.times.length >= policy.perRecipientPerHour
  ) {
    throw new ApiError(
      "recipient_rate_limited",
      "The recipient wallet already received the most transactions allowed in the last hour",
    );
  }
  if (
    usage.player && policy.perPlayerPerHour !== null &&
    usage.player.times.length >= policy.perPlayerPerHour
  ) {
    throw new ApiError(
      "player_rate_limited",
      "The player already received the most transactions allowed in the last hour",
    );
  }
  const budget = assetBudget(request);
  if (budget instanceof ApiError) throw budget;
  if (budget !== null && usage.claim.refused.has("asset")) {
    throw new ApiError(
      "hourly_budget_exceeded",
      "This amount would take the asset past its hourly budget",
    );
  }
  // After every check of the spec (13b), so a request the spec refuses gets the spec's code.
  if (usage.claim.refused.has("failed")) {
    throw new ApiError(
      "daily_failed_tx_quota_exceeded",
      `The project already has ${MAX_FAILED_TX_PER_DAY} failed transactions in the last 24 hours`,
    );
  }
}

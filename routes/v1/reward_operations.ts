/**
 * The reward routes (`rewards.ts`, an extension) as the OpenAPI document describes them: their
 * entries of `V1_OPERATIONS` (`operations.ts`).
 */
import { rewardKeySchema } from "../../lib/rewards/request_body.ts";
import { userIdSchema } from "../../lib/user_id.ts";
import { BODY_ERRORS } from "./error_codes.ts";
import type { Operation } from "./operations.ts";

const keyParam = { key: rewardKeySchema.meta({ description: "The reward's key, URL-encoded" }) };

/** `POST /v1/rewards`, `GET /v1/rewards/{key}`, its cancel, and a player's list. */
export const REWARD_OPERATIONS: readonly Operation[] = [
  {
    id: "grantReward",
    tag: "Rewards",
    method: "post",
    path: "/v1/rewards",
    scope: "pay",
    summary: "Grant a reward",
    description: "A payment to a player by user id, held while they have no wallet and paid " +
      "when they link one, to the wallet linked then (`reward_held`, then `reward_paid`). The " +
      "asset, mint and per-transaction maximum are checked now, as are the policy's cap on what " +
      "one player may hold; the windows, budgets and daily quota when it is paid (one they " +
      "refuse waits for room). A linked player's is paid at once through the payout's path " +
      "(its key `reward:<key>`; the answer waits up to 15 s: `paid` or `paying`). The same key " +
      "with the same body answers the reward as it stands.",
    body: "RewardRequest",
    answer: "Reward",
    errors: [
      ...BODY_ERRORS,
      "invalid_address",
      "wallet_not_configured",
      "idempotency_conflict",
      "sol_transfers_disabled",
      "mint_not_allowed",
      "invalid_mint",
      "invalid_amount",
      "amount_over_limit",
      "invalid_limit_config",
      "reward_hold_limit_exceeded",
      "rpc_error",
    ],
  },
  {
    id: "getReward",
    tag: "Rewards",
    method: "get",
    path: "/v1/rewards/{key}",
    summary: "A reward",
    description: "The reward as it stands.",
    pathParams: keyParam,
    answer: "Reward",
    errors: ["not_found"],
  },
  {
    id: "cancelReward",
    tag: "Rewards",
    method: "post",
    path: "/v1/rewards/{key}/cancel",
    scope: "pay",
    summary: "Cancel a reward",
    description: "Only while it is `held` (`reward_cancelled`); cancelling it again answers the " +
      "same.",
    pathParams: keyParam,
    answer: "Reward",
    errors: ["not_found", "reward_not_cancellable"],
  },
  {
    id: "listPlayerRewards",
    tag: "Rewards",
    method: "get",
    path: "/v1/players/{userId}/rewards",
    summary: "A player's rewards",
    description: "Newest first, at most 100, whatever their status.",
    pathParams: {
      userId: userIdSchema.meta({ description: "The player's Roblox user id" }),
    },
    answer: "PlayerRewards",
    errors: ["invalid_user_id"],
  },
];

/**
 * The body of `POST /v1/rewards` (its one home: the route validates with it and the OpenAPI
 * document shows it), and when two grants under one key are the same.
 */
import { z } from "zod";
import { DECIMAL_PATTERN } from "../chain/amounts.ts";
import type { TxRouteKind } from "../../core/events.ts";
import { addressField, amountMeta } from "../api_fields.ts";
import { isDotSegment } from "../names.ts";
import { userIdSchema } from "../user_id.ts";
import type { RewardRecord } from "../../kv/rewards.ts";

/** Longest reward key, in characters: with `reward:` it fits a payout's key. */
const MAX_REWARD_KEY_CHARS = 120;
/** A reward's expiry when the grant names none, and the longest it may name, in days. */
const DEFAULT_EXPIRY_DAYS = 30;
const MAX_EXPIRY_DAYS = 90;
/** A day in milliseconds: an expiry's unit. */
export const DAY_MS = 24 * 60 * 60 * 1000;

/** A reward's key: 1 to 120 characters, not `.` or `..`. */
export const rewardKeySchema = z.string().refine((key) => {
  const chars = [...key].length;
  return key.isWellFormed() && chars >= 1 && chars <= MAX_REWARD_KEY_CHARS;
}, { message: `must be 1 to ${MAX_REWARD_KEY_CHARS} characters` }).refine(
  (key) => !isDotSegment(key),
  // `GET /v1/rewards/..` is another path once a client resolves the URL.
  { message: "must not be . or .." },
).meta({
  description: "Names one reward: derive it from your own ids (a round and a player), never at " +
    "random, so a retry or a second server can never grant it twice",
  minLength: 1,
  maxLength: MAX_REWARD_KEY_CHARS,
  not: { enum: [".", ".."] },
});

/** True when `key` may be a reward's key (one no grant could use is never looked up). */
export function isUsableRewardKey(key: string): boolean {
  return rewardKeySchema.safeParse(key).success;
}

const common = {
  userId: userIdSchema.meta({ description: "The player, linked or not" }),
  amount: z.string().regex(DECIMAL_PATTERN, "must be a decimal string such as 1.5").meta({
    description: "In token units, as a payout's amount (`invalid_amount`, `amount_over_limit`)",
    ...amountMeta(),
  }),
  idempotencyKey: rewardKeySchema,
  expiresInDays: z.number().int().min(1).max(MAX_EXPIRY_DAYS).optional().meta({
    description: `Days until a reward still held is released (default ${DEFAULT_EXPIRY_DAYS})`,
    format: "int32",
  }),
};
const tokenReward = (kind: "transfer-token" | "mint-token") =>
  z.object({
    kind: z.literal(kind),
    mint: addressField.meta({
      description: "The token's mint: an allowed mint of the policy (`invalid_address` when it " +
        "is not an address)",
    }),
    ...common,
  }).strict();

/** The body of `POST /v1/rewards`: what it pays as the payout route of its `kind` would. */
export const rewardBodySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("transfer-sol"), ...common }).strict(),
  tokenReward("transfer-token"),
  tokenReward("mint-token"),
]);

/** A grant as validated. */
export interface RewardInput {
  userId: number;
  kind: TxRouteKind;
  mint: string | null;
  amount: string;
  key: string;
  expiresInDays: number;
}

/** The validated body as the domain takes it. */
export function toRewardInput(body: z.infer<typeof rewardBodySchema>): RewardInput {
  return {
    userId: body.userId,
    kind: body.kind,
    mint: "mint" in body ? body.mint : null,
    amount: body.amount,
    key: body.idempotencyKey,
    expiresInDays: body.expiresInDays ?? DEFAULT_EXPIRY_DAYS,
  };
}

/** True when a stored reward was granted by the same body (amount as the same text). */
export function isSameGrant(reward: RewardRecord, input: RewardInput): boolean {
  return reward.userId === input.userId && reward.kind === input.kind &&
    reward.mint === input.mint && reward.amount === input.amount &&
    reward.expiresAt - reward.createdAt === input.expiresInDays * DAY_MS;
}

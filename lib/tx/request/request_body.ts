/**
 * The request of the three transaction routes (spec "Transaction routes", request body fields),
 * its one home: the body's schema (which the routes validate with and the OpenAPI document shows),
 * the idempotency key's rule (also for the status route and the confirmation job's payload), its
 * turn into the domain's input (stored as `TxBody`, `kv/tx_requests.ts`), and when two requests
 * are the same.
 */
import { z } from "zod";
import { DECIMAL_PATTERN } from "../../chain/amounts.ts";
import type { TxBody, TxTarget } from "../../../kv/tx_requests.ts";
import type { TxKind, TxRouteKind } from "../../../core/events.ts";
import { isDotSegment } from "../../names.ts";
import { userIdSchema } from "../../user_id.ts";
import { addressField, amountMeta } from "../../api_fields.ts";
import { SOL_DECIMALS } from "../../chain/sol_balance.ts";
import { SOL_TRANSFER_PROGRAMS } from "../build/build.ts";
import { rewardTxKey } from "../../../kv/rewards.ts";

/** Longest idempotency key, in characters. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 128;

/** A validated request: its key and its body as sent. */
export interface TxRequestInput {
  idempotencyKey: string;
  body: TxBody;
}

/**
 * True when `key` may be an idempotency key by its length and text (a key no request could have
 * used is never looked up: it may not even fit in a store key).
 */
export function isUsableKey(key: string): boolean {
  return key.isWellFormed() && [...key].length <= MAX_IDEMPOTENCY_KEY_CHARS;
}

/**
 * `to`: exactly one of `{ userId }` and `{ address }`, nothing else. Each side names the other's key
 * as never present, so a type generated from the document refuses both keys at once (a union of
 * two closed objects alone lets a TypeScript literal carry both). A SOL transfer also refuses, in
 * the document and at step 8, the programs it calls (`SOL_TRANSFER_PROGRAMS`).
 */
function target(refused: readonly string[]) {
  const address = refused.length === 0 ? addressField : addressField.meta({
    description: "Base58 Solana address (32 bytes); not a program the transfer calls",
    not: { enum: refused },
  });
  return z.xor([
    z.object({ userId: userIdSchema, address: z.never().optional() }).strict(),
    z.object({ address, userId: z.never().optional() }).strict(),
  ], { error: (issue) => targetProblem(issue.input) }).meta({
    description: "The recipient: a player who linked a wallet to this project (`userId`), or a " +
      "wallet `address`. An address that is not one is `invalid_address` (checked after the key)",
  });
}

/** What is wrong with a `to` that matches neither side, said in one line. */
function targetProblem(to: unknown): string {
  if (typeof to !== "object" || to === null || Array.isArray(to)) return "must be an object";
  const keys = Object.keys(to);
  const other = keys.find((key) => key !== "userId" && key !== "address");
  if (other !== undefined) return `must have only userId or address, not ${other}`;
  if (keys.length !== 1) return "must have exactly one of userId or address";
  return keys[0] === "userId"
    ? `userId must be a positive integer of at most ${Number.MAX_SAFE_INTEGER}`
    : "address must be a string";
}

/** Largest amount in base units a transfer carries (a u64). */
const MAX_RAW_AMOUNT = 2n ** 64n - 1n;

function amount(decimals?: number) {
  return z.string().regex(DECIMAL_PATTERN, "must be a decimal string such as 1.5").meta({
    description: "In token units, as a decimal string: greater than zero, with no more decimals " +
      "than the asset has (9 for SOL, the mint's for a token), else `invalid_amount`",
    ...amountMeta(decimals, decimals === undefined ? undefined : MAX_RAW_AMOUNT),
  });
}

/** The text rules of an idempotency key: 1 to 128 characters, not `.` or `..`. */
const keyText = z.string().refine(
  (key) => {
    const chars = [...key].length;
    return chars >= 1 && chars <= MAX_IDEMPOTENCY_KEY_CHARS;
  },
  { message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} characters` },
).refine((key) => !isDotSegment(key), {
  // `GET /v1/tx/..` is `GET /v1/tx` once a client resolves the URL: the key could not be read.
  message: "must not be . or ..",
});

const keyMeta = {
  description: "Names one intended payment: derive it from your own ids (a round and a player), " +
    "never at random, so a retry or a second server can never pay twice",
  minLength: 1,
  maxLength: MAX_IDEMPOTENCY_KEY_CHARS,
  not: { enum: [".", ".."] },
};

/** An idempotency key as stored and looked up: a route's, or a reward's payment's (`reward:<key>`). */
export const idempotencyKeySchema = keyText.meta(keyMeta);

/**
 * A key a transaction route is sent with: never one of the keys rewards' payments take
 * (`rewardTxKey`, `kv/rewards.ts`), so no payout of the game can stand for a reward's.
 */
const routeKeySchema = keyText.refine((key) => !key.startsWith(rewardTxKey("")), {
  message: `must not start with ${rewardTxKey("")} (the keys of rewards' payments)`,
}).meta({
  ...keyMeta,
  description: `${keyMeta.description}; not starting with \`${rewardTxKey("")}\`, the keys ` +
    "of rewards' payments",
});

const solSchema = z.object({
  to: target(SOL_TRANSFER_PROGRAMS),
  amount: amount(SOL_DECIMALS),
  idempotencyKey: routeKeySchema,
}).strict();
const tokenSchema = z.object({
  to: target([]),
  mint: addressField.meta({
    description: "The token's mint: an allowed mint of the policy (`invalid_address` when it is " +
      "not an address)",
  }),
  amount: amount(),
  idempotencyKey: routeKeySchema,
}).strict();

/** The zod schema of a route's body. */
export function txBodySchema(kind: TxRouteKind): typeof solSchema | typeof tokenSchema {
  return kind === "transfer-sol" ? solSchema : tokenSchema;
}

/** Turns a parsed body into the stored form, keeping `to` exactly as sent. */
export function toRequestInput(
  parsed: {
    to: { userId?: number | undefined; address?: string | undefined };
    amount: string;
    idempotencyKey: string;
    mint?: string;
  },
): TxRequestInput {
  const to: TxTarget = parsed.to.userId !== undefined
    ? { userId: parsed.to.userId }
    : { address: parsed.to.address! };
  return {
    idempotencyKey: parsed.idempotencyKey,
    body: { to, mint: parsed.mint ?? null, amount: parsed.amount },
  };
}

/** True when two requests are the same as sent: kind, recipient form and value, mint and amount text. */
export function isSameRequest(
  a: { kind: TxKind; body: TxBody },
  b: { kind: TxKind; body: TxBody },
): boolean {
  const ta = a.body.to as { userId?: number; address?: string };
  const tb = b.body.to as { userId?: number; address?: string };
  return a.kind === b.kind && ta.userId === tb.userId && ta.address === tb.address &&
    a.body.mint === b.body.mint && a.body.amount === b.body.amount;
}

/** Most items one `POST /v1/tx/batch` carries. */
export const MAX_BATCH_ITEMS = 50;

/** The body of `POST /v1/tx/batch`: items of any kind, each the body of its single route. */
export const txBatchSchema = z.object({
  items: z.array(z.discriminatedUnion("kind", [
    solSchema.extend({ kind: z.literal("transfer-sol") }),
    tokenSchema.extend({ kind: z.literal("transfer-token") }),
    tokenSchema.extend({ kind: z.literal("mint-token") }),
  ])).min(1).max(MAX_BATCH_ITEMS),
}).refine(
  (batch) => new Set(batch.items.map((item) => item.idempotencyKey)).size === batch.items.length,
  { message: "each item needs an idempotencyKey of its own", path: ["items"] },
);

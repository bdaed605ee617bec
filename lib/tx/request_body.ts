/**
 * The request of the three transaction routes (spec "Transaction routes", request body fields),
 * its one home: the body's schema (which the routes validate with and the OpenAPI document shows),
 * the idempotency key's rule (also for the status route and the confirmation job's payload), its
 * turn into the domain's input (stored as `TxBody`, `kv/tx_requests.ts`), and when two requests
 * are the same.
 */
import { z } from "zod";
import { DECIMAL_PATTERN } from "../chain/amounts.ts";
import type { TxBody, TxTarget } from "../../kv/tx_requests.ts";
import type { TxKind, TxRouteKind } from "../../core/events.ts";
import { isDotSegment } from "../names.ts";
import { userIdSchema } from "../user_id.ts";

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

const target = z.object({
  userId: userIdSchema.optional(),
  address: z.string().optional(),
}).strict().refine(
  (to) => (to.userId === undefined) !== (to.address === undefined),
  { message: "must have exactly one of userId or address" },
).meta({
  description: "Exactly one of `userId` (a player who linked a wallet) or `address`",
  minProperties: 1,
  maxProperties: 1,
});

const amount = z.string().regex(DECIMAL_PATTERN, "must be a decimal string such as 1.5").meta({
  description: "In token units, as a decimal string",
  examples: ["1.5"],
});

/** An idempotency key: 1 to 128 characters, not `.` or `..`. */
export const idempotencyKeySchema = z.string().refine(
  (key) => {
    const chars = [...key].length;
    return chars >= 1 && chars <= MAX_IDEMPOTENCY_KEY_CHARS;
  },
  { message: `must be 1 to ${MAX_IDEMPOTENCY_KEY_CHARS} characters` },
).refine((key) => !isDotSegment(key), {
  // `GET /v1/tx/..` is `GET /v1/tx` once a client resolves the URL: the key could not be read.
  message: "must not be . or ..",
}).meta({
  minLength: 1,
  maxLength: MAX_IDEMPOTENCY_KEY_CHARS,
  not: { enum: [".", ".."] },
});

const solSchema = z.object({ to: target, amount, idempotencyKey: idempotencyKeySchema });
const tokenSchema = z.object({
  to: target,
  mint: z.string(),
  amount,
  idempotencyKey: idempotencyKeySchema,
});

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

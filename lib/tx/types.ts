/** Shapes shared by the transaction routes, their store and their background checks. */
import type { TxKind } from "../../core/events.ts";

export type { TxKind } from "../../core/events.ts";

/** Status of a transaction request (spec "Transaction request status"). */
export type TxStatus = "pending" | "submitted" | "confirmed" | "failed";

/** The request's recipient as sent: a player or a wallet address. */
export type TxTarget = { userId: number } | { address: string };

/** A transaction request body as sent; `amount` stays the exact text, so `1` and `1.0` differ. */
export interface TxBody {
  to: TxTarget;
  mint: string | null;
  amount: string;
}

/** The spec's TxResult, as every transaction route and the status route answer it. */
export interface TxResult {
  idempotencyKey: string;
  kind: TxKind;
  status: TxStatus;
  signature: string | null;
  recipient: string;
  error: string | null;
}

/** Error of an attempt proven expired (spec "States and transitions", rule 2). */
export const EXPIRED_ERROR = "Transaction expired before it was confirmed";
/** Error of an attempt whose instance stopped before it could send; it sends no event. */
export const ABANDONED_ERROR = "Abandoned before sending";

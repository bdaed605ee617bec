/** The answer of every transaction route and the status route, and the errors of its final states. */
import type { ApiError } from "../../../core/api_error.ts";
import type { TxKind } from "../../../core/events.ts";
import type { TxRequestRecord, TxStatus } from "../../../kv/tx_requests.ts";

/** The spec's TxResult, as every transaction route and the status route answer it. */
export interface TxResult {
  idempotencyKey: string;
  kind: TxKind;
  status: TxStatus;
  signature: string | null;
  recipient: string;
  error: string | null;
}

/** The TxResult of a stored request. */
export function txResultOf(record: TxRequestRecord): TxResult {
  return {
    idempotencyKey: record.key,
    kind: record.kind,
    status: record.status,
    signature: record.signature,
    recipient: record.recipient,
    error: record.error,
  };
}

/** What one attempt of a transaction answers: its TxResult, or the 502 its route answers. */
export type AttemptOutcome =
  | { kind: "result"; result: TxResult }
  | { kind: "error"; error: ApiError };

/** Error of an attempt proven expired (spec "States and transitions", rule 2). */
export const EXPIRED_ERROR = "Transaction expired before it was confirmed";
/** Error of an attempt whose instance stopped before it could send; it sends no event. */
export const ABANDONED_ERROR = "Abandoned before sending";

/** A transaction request as the domain takes it, and when two requests are the same as sent. */
import type { TxBody } from "../../kv/tx_requests.ts";
import type { TxKind } from "../../core/events.ts";

/** A validated request: its key and its body as sent. */
export interface TxRequestInput {
  idempotencyKey: string;
  body: TxBody;
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

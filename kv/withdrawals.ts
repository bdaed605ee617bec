/**
 * Withdrawals asked for from the dashboard: the signed message and each line's request, so that
 * the same signed statement sent again (a double click, an answer lost on the way) answers the
 * same withdrawal and can never pay twice. A withdrawal's id is its statement's nonce; its lines
 * are requests of kind `withdraw` under idempotency keys made from that id (`lib/tx/withdraw.ts`).
 * Kept a day (`expireIn`, and `expiresAt` re-checked on read); the audit log keeps the facts.
 */
import { addAuditEntry, type AuditInput } from "./audit_log.ts";

/** A withdrawal as stored. */
export interface Withdrawal {
  id: string;
  projectId: string;
  /** The member who signed it. */
  requestedBy: string;
  recipient: string;
  lines: Array<{ idempotencyKey: string; mint: string | null; amount: string }>;
  /** The message signed: a resend is checked against it. */
  message: string;
  createdAt: number;
  /** Until when sending it again may send a line again (its statement's expiry). */
  resendUntil: number;
  expiresAt: number;
}

/** How long a withdrawal's record is kept: one day. */
export const WITHDRAWAL_KEPT_MS = 24 * 3_600_000;

function withdrawalKey(projectId: string, id: string): Deno.KvKey {
  return ["withdrawals", projectId, id];
}

/**
 * Adds a new withdrawal and its audit entry to `op`: the commit that spends its statement
 * (`lib/auth/statements.ts`), so that a statement used is a withdrawal recorded.
 */
export function addWithdrawal(
  op: Deno.AtomicOperation,
  withdrawal: Withdrawal,
  options: { audit: AuditInput },
): void {
  const key = withdrawalKey(withdrawal.projectId, withdrawal.id);
  op.check({ key, versionstamp: null }).set(key, withdrawal, { expireIn: WITHDRAWAL_KEPT_MS });
  addAuditEntry(op, options.audit);
}

/** Returns the withdrawal, or null when unknown or no longer kept at `now`. */
export async function getWithdrawal(
  kv: Deno.Kv,
  projectId: string,
  id: string,
  now: number,
): Promise<Withdrawal | null> {
  if (id.length === 0 || id.length > 128) return null;
  const record = (await kv.get<Withdrawal>(withdrawalKey(projectId, id))).value;
  return record && record.expiresAt > now ? record : null;
}

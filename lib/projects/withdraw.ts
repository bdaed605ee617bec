/**
 * Withdrawals from the dashboard: the owner or an admin moves SOL or a token (or everything) from
 * the managed wallet to any address. Two steps:
 *
 * 1. `prepareWithdrawal` checks what was asked (`lib/tx/withdraw_plan.ts`) and issues a statement
 *    naming the project, every amount and mint, and the recipient, for the member's wallet to sign
 *    (`lib/auth/statements.ts`: 10 minutes, single use).
 * 2. `confirmWithdrawal` spends the statement with its signature, records the withdrawal with its
 *    audit entry in one commit (`kv/withdrawals.ts`), and sends each line through the money path
 *    (`lib/tx/withdraw.ts`), together, answering each line's result.
 *
 * Idempotent: the same signed statement sent again answers the same withdrawal, its lines the
 * same requests under the same keys (sent again only while the statement could still be signed,
 * and a key pays at most once); a statement never signed cannot be used.
 */
import type { AppContext } from "../context.ts";
import { ApiError } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import {
  addWithdrawal,
  getWithdrawal,
  type Withdrawal,
  WITHDRAWAL_KEPT_MS,
} from "../../kv/withdrawals.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import type { PendingStatement } from "../../kv/statements.ts";
import { issueStatement, spendStatement, statementGone } from "../auth/statements.ts";
import { assertSignedBy } from "../auth/siws.ts";
import { type ActionFields, readFlag, readText, unknownFields } from "./fields.ts";
import { invalidSettings } from "../issue_text.ts";
import type { ProjectAccess } from "./access.ts";
import { type PlannedLine, planWithdrawal, planWithdrawEverything } from "../tx/withdraw_plan.ts";
import { sendWithdrawal } from "../tx/withdraw.ts";
import { type TxResult, txResultOf } from "../tx/lifecycle/result.ts";
import { startDeadline } from "../tx/rpc/timing.ts";

const WITHDRAW_FIELDS = ["recipient", "asset", "amount", "everything"];

/** One line of the answer: what was sent, and its result or why it was refused. */
interface LineAnswer {
  idempotencyKey: string;
  mint: string | null;
  amount: string;
  result: TxResult | null;
  error: { code: string; message: string } | null;
}

/** What a confirmed withdrawal answers. */
export interface WithdrawalAnswer {
  id: string;
  recipient: string;
  requestedBy: string;
  lines: LineAnswer[];
}

/**
 * Checks a withdrawal asked for with `{ recipient, asset, amount }`, or `{ recipient, everything:
 * true }`, and issues the statement to sign; 409 `wallet_not_configured` without a wallet.
 */
export async function prepareWithdrawal(
  ctx: AppContext,
  access: ProjectAccess,
  fields: ActionFields,
): Promise<PendingStatement & { lines: PlannedLine[] }> {
  const { project, developer } = access;
  if (!project.walletAddress) {
    throw new ApiError("wallet_not_configured", "The project has no managed wallet");
  }
  const unknown = unknownFields(fields, (name) => WITHDRAW_FIELDS.includes(name));
  if (unknown.length > 0) throw invalidSettings(unknown);
  const recipient = readText(fields.recipient);
  const plan = readFlag(fields.everything) === true
    ? await planWithdrawEverything(ctx, project, { recipient })
    : await planWithdrawal(ctx, project, {
      recipient,
      asset: readText(fields.asset),
      amount: readText(fields.amount),
    });
  const statement = await issueStatement(ctx, {
    purpose: "withdraw",
    project,
    developer,
    statement: `Withdraw ${describeLines(plan.lines)} from the managed wallet ` +
      `${project.walletAddress} of ${project.name} (project ${project.id}, ${project.cluster}) ` +
      `to ${plan.recipient}. Signing authorizes this withdrawal once.`,
    payload: { recipient: plan.recipient, lines: plan.lines },
  });
  return { ...statement, lines: plan.lines };
}

/** `1.5 SOL, 200 of the token <mint>`. */
export function describeLines(lines: readonly PlannedLine[]): string {
  return lines.map((l) => l.mint ? `${l.amount} of the token ${l.mint}` : `${l.amount} SOL`)
    .join(", ");
}

/** Confirms the statement `nonce` with its `signature` and sends the withdrawal (see the header). */
export async function confirmWithdrawal(
  ctx: AppContext,
  access: ProjectAccess,
  input: { nonce: string; signature: string },
): Promise<WithdrawalAnswer> {
  const withdrawal = await signedWithdrawal(ctx, access, input);
  const deadline = startDeadline(ctx.tx.timing);
  const resend = ctx.clock.now() <= withdrawal.resendUntil;
  const lines = await Promise.all(withdrawal.lines.map(async (line): Promise<LineAnswer> => {
    try {
      const result = resend
        ? await sendWithdrawal(ctx, {
          projectId: withdrawal.projectId,
          member: access.developer,
          recipient: withdrawal.recipient,
          line,
        }, { deadline })
        : await storedResult(ctx, withdrawal.projectId, line.idempotencyKey);
      return { ...line, result, error: null };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return { ...line, result: null, error: { code: error.code, message: error.message } };
    }
  }));
  return {
    id: withdrawal.id,
    recipient: withdrawal.recipient,
    requestedBy: withdrawal.requestedBy,
    lines,
  };
}

/**
 * The withdrawal the signed statement confirms: recorded in the commit that spends the statement
 * here, or the one a first use of it recorded (also one at the same moment), when `signature` is
 * the same member's over the same message.
 */
async function signedWithdrawal(
  ctx: AppContext,
  access: ProjectAccess,
  input: { nonce: string; signature: string },
): Promise<Withdrawal> {
  const { project, developer } = access;
  const now = ctx.clock.now();
  const resent = async () => {
    const earlier = await getWithdrawal(ctx.kv, project.id, input.nonce, now);
    if (!earlier) return null;
    if (earlier.requestedBy !== developer) throw statementGone();
    assertSignedBy(earlier.message, input.signature, developer);
    return earlier;
  };
  const earlier = await resent();
  if (earlier) return earlier;
  let withdrawal: Withdrawal | null = null;
  try {
    await spendStatement(ctx, {
      ...input,
      purpose: "withdraw",
      projectId: project.id,
      developer,
    }, (op, statement) => {
      withdrawal = withdrawalOf(statement, developer, now);
      addWithdrawal(op, withdrawal, {
        audit: {
          projectId: project.id,
          actor: developer,
          action: "withdrawal_requested",
          details: {
            withdrawalId: withdrawal.id,
            recipient: withdrawal.recipient,
            summary: describeLines(withdrawal.lines),
            lines: withdrawal.lines,
          },
          at: now,
        },
      });
    });
  } catch (error) {
    // A concurrent confirmation of the same statement may have spent it first.
    const later = error instanceof ApiError && error.code === "challenge_expired"
      ? await resent()
      : null;
    if (later) return later;
    throw error;
  }
  const recorded = withdrawal as Withdrawal | null;
  if (!recorded) throw statementGone();
  log("info", "Withdrawal requested", {
    projectId: project.id,
    withdrawalId: recorded.id,
    developer,
    recipient: recorded.recipient,
    lines: recorded.lines.length,
  });
  return recorded;
}

/** The withdrawal a spent statement names: its lines under keys made from its nonce. */
function withdrawalOf(statement: PendingStatement, developer: string, now: number): Withdrawal {
  const planned = statement.payload as { recipient: string; lines: PlannedLine[] };
  return {
    id: statement.nonce,
    projectId: statement.projectId,
    requestedBy: developer,
    recipient: planned.recipient,
    lines: planned.lines.map((line, i) => ({
      idempotencyKey: `withdraw-${statement.nonce}-${i + 1}`,
      ...line,
    })),
    message: statement.message,
    createdAt: now,
    resendUntil: statement.expiresAt,
    expiresAt: now + WITHDRAWAL_KEPT_MS,
  };
}

async function storedResult(ctx: AppContext, projectId: string, key: string): Promise<TxResult> {
  const record = await getTxRequest(ctx.kv, projectId, key, ctx.clock.now());
  if (!record) throw new ApiError("not_found", "This line was never sent");
  return txResultOf(record);
}

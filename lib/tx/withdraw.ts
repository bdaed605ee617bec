/**
 * A withdrawal's line through the money path: SOL or one token from the managed wallet to an
 * address, asked for from the dashboard by the project's owner or an admin, as a request of kind
 * `withdraw` under its own idempotency key. From the reservation on it takes the payouts' path
 * (`reserveAndSend`: the signed bytes stored before the first send, the expiry and retry proofs,
 * the background confirmation, the `tx` event); these checks replace the routes' steps 1 to 11:
 *
 * | Check                   | For a withdrawal                                                    |
 * | ----------------------- | ------------------------------------------------------------------- |
 * | Sender                  | a member of the active project whose role may withdraw, and still   |
 * |                         | is when the reservation commits (its record is checked there, as an |
 * |                         | API key's is)                                                       |
 * | 6                       | the managed wallet exists                                           |
 * | 7                       | the key is new or was used for the same withdrawal                  |
 * | 10                      | the mint exists on the cluster                                      |
 * | 11, first half          | the amount fits its decimals                                        |
 * | 9, 11's maximum, 12, 13 | none of the policy's steps: a withdrawal is outside the game        |
 * |                         | policy's limits and counts in none of their windows (`limits.ts`)   |
 */
import type { TxContext } from "./runtime.ts";
import { ApiError } from "../../core/api_error.ts";
import { parseAddress } from "../chain/validation.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";
import type { MintInfo } from "../chain/mints.ts";
import { type Project, projectKey } from "../../kv/projects.ts";
import { memberKey } from "../../kv/members.ts";
import { emptyPolicy } from "../../kv/policy.ts";
import { type TxBody, txRequestKey, type TxRequestRecord } from "../../kv/tx_requests.ts";
import type { CheckedRequest } from "./request/checks.ts";
import { findMint, parseAmount, storedAnswer } from "./request/check_steps.ts";
import { checkSender } from "./request/sender.ts";
import { reserveAndSend } from "./handle_request.ts";
import { SOL_ASSET } from "./request/policy.ts";
import { type TxResult, txResultOf } from "./lifecycle/result.ts";
import type { Deadline } from "./rpc/timing.ts";

/** One line of a withdrawal: its idempotency key, the mint (null for SOL) and the amount in token units. */
export interface WithdrawalLine {
  idempotencyKey: string;
  mint: string | null;
  amount: string;
}

/**
 * Sends one line of a withdrawal asked for by `member`, or answers the line's stored attempt when
 * its key was used for it already; throws the first failing check as an `ApiError`.
 */
export async function sendWithdrawal(
  ctx: TxContext,
  request: { projectId: string; member: string; recipient: string; line: WithdrawalLine },
  options: { deadline: Deadline },
): Promise<TxResult> {
  const { projectId, member, line } = request;
  const recipient = parseAddress(request.recipient);
  if (!recipient) throw new ApiError("invalid_address", "recipient is not a valid address");
  const body: TxBody = { to: { address: recipient }, mint: line.mint, amount: line.amount };
  const [projectEntry, memberEntry, previous] = await ctx.kv.getMany([
    projectKey(projectId),
    memberKey(projectId, member),
    txRequestKey(projectId, line.idempotencyKey),
  ]) as [
    Deno.KvEntryMaybe<Project>,
    Deno.KvEntryMaybe<unknown>,
    Deno.KvEntryMaybe<TxRequestRecord>,
  ];
  const project = projectEntry.value;
  const sender = { member };
  checkSender(project, memberEntry.value, sender);
  const walletAddress = parseAddress(project!.walletAddress ?? undefined);
  if (!walletAddress) {
    throw new ApiError("wallet_not_configured", "The project has no managed wallet");
  }
  const existing = storedAnswer(previous.value, { kind: "withdraw", body }, ctx.clock.now());
  if (existing) return txResultOf(existing);
  let mint: MintInfo | null = null;
  if (line.mint !== null) {
    const mintAddress = parseAddress(line.mint);
    if (!mintAddress) throw new ApiError("invalid_address", "mint is not a valid address");
    mint = await findMint(ctx, project!, mintAddress, options.deadline);
    if (!mint) {
      throw new ApiError("invalid_mint", "The mint does not exist on the project's cluster");
    }
  }
  const decimals = mint?.decimals ?? SOL_DECIMALS;
  const checked: CheckedRequest = {
    sender,
    project: project!,
    walletAddress,
    kind: "withdraw",
    input: { idempotencyKey: line.idempotencyKey, body },
    // Not read: a withdrawal is outside the policy.
    policy: emptyPolicy(),
    previous,
    read: { project: projectEntry, sender: memberEntry, policy: null },
    ahead: Promise.resolve(null),
    recipient,
    recipientUserId: null,
    asset: mint ? mint.address : SOL_ASSET,
    mint,
    decimals,
    amount: parseAmount(line.amount, decimals),
  };
  return await reserveAndSend(ctx, checked, options);
}

/**
 * The policy's steps of a payout's checks (`checks.ts`): step 9 (the asset allowed, with its
 * per-transaction maximum) and step 11's maximum. The checks make them on the policy they read;
 * a reservation whose commit finds a policy saved since makes them again on that one
 * (`checkPolicyAgain`, `reserve.ts`), so a lowered maximum, a disabled asset or a removed mint
 * binds at once.
 */
import type { Address } from "@solana/kit";
import { ApiError } from "../../../core/api_error.ts";
import type { TxKind } from "../../../core/events.ts";
import { emptyPolicy, type TxPolicy } from "../../../kv/policy.ts";
import { parseUnits } from "../../chain/amounts.ts";
import type { CheckedRequest } from "./checks.ts";
import { findMintAllowance } from "./policy.ts";

/**
 * Steps 9 and 11's maximum again, on the policy read as `entry`, saved since the checks read
 * theirs (the reservation found it changed, `reserve.ts`): the request judged by it, or its first
 * refusal thrown. Step 10 (the mint exists) and the amount do not depend on the policy.
 */
export function checkPolicyAgain(
  request: CheckedRequest,
  entry: Deno.KvEntryMaybe<TxPolicy>,
): CheckedRequest {
  const policy = entry.value ?? emptyPolicy();
  const limitText = allowedMaximum(request.kind, policy, request.mint?.address ?? null);
  checkMaximum(limitText, request.amount, request.decimals);
  return { ...request, policy, read: { ...request.read, policy: entry } };
}

/** Step 9: the per-transaction maximum of the asset, or the refusal when the policy allows none. */
export function allowedMaximum(
  kind: TxKind,
  policy: TxPolicy,
  mintAddress: Address | null,
): string {
  if (kind === "transfer-sol") {
    if (policy.maxSolPerTransfer === null) {
      throw new ApiError("sol_transfers_disabled", "SOL transfers are disabled by the policy");
    }
    return policy.maxSolPerTransfer;
  }
  const allowance = findMintAllowance(policy, mintAddress!);
  if (!allowance) {
    throw new ApiError("mint_not_allowed", "The mint is not allowed by the policy");
  }
  return allowance.maxPerTransaction;
}

/** Step 11's maximum: `amount` (in units of `decimals`) within the per-transaction one. */
export function checkMaximum(limitText: string, amount: bigint, decimals: number): void {
  const limit = parseUnits(limitText, decimals);
  if (limit === null) {
    throw new ApiError(
      "invalid_limit_config",
      `The per-transaction maximum ${limitText} cannot be represented with ${decimals} decimals`,
    );
  }
  if (amount > limit) {
    throw new ApiError(
      "amount_over_limit",
      `Amount is above the per-transaction maximum of ${limitText}`,
    );
  }
}

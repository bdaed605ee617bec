/**
 * Single steps of the transaction routes' order of checks that the other money path (the
 * dashboard's withdrawals, `withdraw.ts`) and the reservation share with `checks.ts`: step 7's
 * answer from a used key, step 10's mint, step 11's amount.
 */
import type { Address } from "@solana/kit";
import type { TxContext } from "../runtime.ts";
import { parseUnits } from "../../chain/amounts.ts";
import { fetchMint, type MintInfo } from "../../chain/mints.ts";
import type { Project } from "../../../kv/projects.ts";
import { liveTxRequest, type TxBody, type TxRequestRecord } from "../../../kv/tx_requests.ts";
import { ApiError } from "../../../core/api_error.ts";
import { isSameRequest } from "./request_body.ts";
import { retryRead, rpcFailureReason } from "../rpc/chain_errors.ts";
import type { Deadline } from "../rpc/timing.ts";
import { abortable } from "../../../core/deadline.ts";
import type { TxKind } from "../../../core/events.ts";

/**
 * Step 7: the stored attempt a used key answers with (one not `failed`), or null to go on with a
 * new or a failed key; 409 `idempotency_conflict` when the key was used for another request.
 */
export function storedAnswer(
  stored: TxRequestRecord | null,
  request: { kind: TxKind; body: TxBody },
  now: number,
): TxRequestRecord | null {
  const used = liveTxRequest(stored, now);
  if (!used) return null;
  if (!isSameRequest(used, request)) throw idempotencyConflict();
  return used.status === "failed" ? null : used;
}

/** The amount in raw units of an asset with `decimals`; 400 `invalid_amount` (step 11). */
export function parseAmount(text: string, decimals: number): bigint {
  const amount = parseUnits(text, decimals);
  if (amount === null || amount === 0n || amount > U64_MAX) {
    throw new ApiError(
      "invalid_amount",
      amount === 0n
        ? "Amount must be greater than zero"
        : `Amount must be a positive number with at most ${decimals} decimals`,
    );
  }
  return amount;
}

/** Largest raw amount a token or lamport amount can hold. */
const U64_MAX = 2n ** 64n - 1n;

/** 409 `idempotency_conflict`. */
export function idempotencyConflict(): ApiError {
  return new ApiError(
    "idempotency_conflict",
    "The idempotency key was already used for a different request",
  );
}

/** The mint on the project's cluster (cached), or null when there is none; 502 `rpc_error`. */
export async function findMint(
  ctx: TxContext,
  project: Project,
  mint: Address,
  deadline: Deadline,
): Promise<MintInfo | null> {
  const read = (abortSignal: AbortSignal) =>
    fetchMint(ctx.rpc[project.cluster], mint, { abortSignal });
  try {
    // A lookup of the same mint already in flight is shared, and waited for until our deadline.
    return await abortable(
      ctx.tx.mints.get(
        project.cluster,
        mint,
        () => retryRead(read, { timing: ctx.tx.timing }),
      ),
      deadline.signal,
    );
  } catch (error) {
    // Nothing is reserved yet: the caller may simply retry.
    throw new ApiError("rpc_error", `Could not read the mint: ${rpcFailureReason(error)}`);
  }
}

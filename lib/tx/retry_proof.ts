/**
 * Before a `failed` key is retried, its latest attempt must be proven dead: never signed, refused
 * by the node on its first send (so never forwarded), landed and failed on-chain, or proven
 * expired. An attempt found landed makes the key `confirmed` instead of paying again; one that
 * cannot be proven dead yet (a node hiding its history) blocks the retry; an RPC that cannot be
 * reached answers 502 `rpc_error`, the key staying `failed` with nothing sent.
 * Earlier attempts were proven the same way when they gave way, and a dead attempt stays dead.
 */
import type { Signature } from "@solana/kit";
import type { TxContext } from "./runtime.ts";
import { ApiError } from "../../core/api_error.ts";
import type { TxRequestRecord } from "../../kv/tx_requests.ts";
import { rpcFailureReason } from "./chain_errors.ts";
import { callSignals, type Deadline } from "./timing.ts";
import { confirmOnChain } from "./confirm.ts";

/** What became of a failed key's latest attempt. */
export type RetryProof = "dead" | "landed" | "unproven";

/** Proves the stored failed attempt dead, or finds it landed; throws 502 `rpc_error`. */
export async function proveEarlierAttempt(
  ctx: TxContext,
  stored: TxRequestRecord,
  options: { deadline?: Deadline } = {},
): Promise<RetryProof> {
  const signed = stored.signed;
  if (!signed || !stored.signature || signed.refused) return "dead";
  try {
    const verdict = await confirmOnChain(ctx.rpc[stored.cluster], {
      signature: stored.signature as Signature,
      signed,
      attemptId: stored.attemptId,
    }, { signals: callSignals(ctx.tx.timing, options.deadline) });
    if (verdict.kind === "confirmed") return "landed";
    return verdict.kind === "unconfirmed" || verdict.kind === "unproven" ? "unproven" : "dead";
  } catch (error) {
    throw new ApiError(
      502,
      "rpc_error",
      `Could not build the transaction: ${rpcFailureReason(error)}`,
    );
  }
}

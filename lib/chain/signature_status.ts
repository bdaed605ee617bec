/** A transaction signature's status, searched through the node's whole transaction history. */
import type { Rpc, Signature, SolanaRpcApi } from "@solana/kit";

/** The spec's Signature status. */
export interface SignatureStatus {
  signature: Signature;
  status: "processed" | "confirmed" | "finalized" | "failed" | "unknown";
  slot: number | null;
  /** The on-chain error as JSON when the transaction failed. */
  error: string | null;
}

/** Asks the node for one signature; `unknown` when it has no record of it. */
export async function fetchSignatureStatus(
  rpc: Rpc<SolanaRpcApi>,
  signature: Signature,
  options: { abortSignal?: AbortSignal } = {},
): Promise<SignatureStatus> {
  const { value } = await rpc
    .getSignatureStatuses([signature], { searchTransactionHistory: true })
    .send(options);
  const found = value[0];
  if (!found) return { signature, status: "unknown", slot: null, error: null };
  const slot = Number(found.slot);
  if (found.err !== null) {
    return { signature, status: "failed", slot, error: transactionErrorJson(found.err) };
  }
  // A landed transaction always carries a level; an old node without one has at least processed it.
  return { signature, status: found.confirmationStatus ?? "processed", slot, error: null };
}

/** The on-chain error as the node sent it, e.g. `{"InstructionError":[0,{"Custom":1}]}`. */
export function transactionErrorJson(err: unknown): string {
  // Kit turns every JSON number into a bigint; error indexes and codes fit in a number.
  return JSON.stringify(err, (_key, value) => typeof value === "bigint" ? Number(value) : value);
}

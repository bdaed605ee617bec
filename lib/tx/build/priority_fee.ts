/**
 * Priority fees on mainnet, so transactions land under congestion.
 *
 * | Part       | Rule, and why                                                                    |
 * | ---------- | -------------------------------------------------------------------------------- |
 * | Price      | The 75th percentile of the per-slot minimum fees that                            |
 * |            | `getRecentPrioritizationFees` reports for the accounts the transaction writes    |
 * |            | (the last 150 slots): it beats most recent competition for the same accounts     |
 * |            | without paying for outliers.                                                     |
 * | Clamp      | Between 1,000 and 2,000,000 micro-lamports per CU: a quiet market still pays a   |
 * |            | little, a spike cannot drain the wallet.                                         |
 * | CU limit   | Fixed per kind with a margin over measured use (a SOL transfer uses about 750 CU |
 * |            | with the two budget instructions and the memo; a token transfer or mint that     |
 * |            | creates the associated account uses 25k to 40k): the fee (price x limit) stays   |
 * |            | small and no request pays a simulation round trip.                               |
 * | At the cap | A token transaction pays at most 0.0002 SOL in priority fee.                     |
 */
import type { Address, Rpc, SolanaRpcApi } from "@solana/kit";
import type { TxRouteKind } from "../../../core/events.ts";

/** Lowest compute-unit price set on mainnet, in micro-lamports. */
export const MIN_MICRO_LAMPORTS_PER_CU = 1_000n;
/** Highest compute-unit price set on mainnet, in micro-lamports. */
export const MAX_MICRO_LAMPORTS_PER_CU = 2_000_000n;

/**
 * The compute-unit limit set for a transaction of `payments` payments of one kind (a batch shares
 * a transaction): 2,000 for a SOL transfer and 1,000 more per further one (a transfer costs 150,
 * the memo a little more per attempt id it names), 100,000 per token transfer or mint.
 */
export function computeUnitLimit(kind: TxRouteKind, payments = 1): number {
  return kind === "transfer-sol" ? 1_000 + 1_000 * payments : 100_000 * payments;
}

/** The compute-unit price to pay now for a transaction writing `writable`. */
export async function fetchComputeUnitPrice(
  rpc: Rpc<SolanaRpcApi>,
  writable: readonly Address[],
  options: { abortSignal?: AbortSignal } = {},
): Promise<bigint> {
  const fees = await rpc.getRecentPrioritizationFees(writable.slice(0, 128))
    .send(options);
  return choosePrice(fees.map((fee) => BigInt(fee.prioritizationFee)));
}

/** The 75th percentile of recent fees, clamped to the allowed range. */
export function choosePrice(recent: readonly bigint[]): bigint {
  const sorted = [...recent].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const p75 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.75))];
  // No recent fees (`p75` undefined): the floor.
  if (p75 === undefined || p75 < MIN_MICRO_LAMPORTS_PER_CU) return MIN_MICRO_LAMPORTS_PER_CU;
  return p75 > MAX_MICRO_LAMPORTS_PER_CU ? MAX_MICRO_LAMPORTS_PER_CU : p75;
}

/** A wallet's SOL balance at confirmed commitment. */
import type { Address, Rpc, SolanaRpcApi } from "@solana/kit";
import { formatUnits } from "./amounts.ts";

/** Decimals of SOL: one SOL is 10^9 lamports. */
export const SOL_DECIMALS = 9;

/** The spec's SOL balance. */
export interface SolBalance {
  address: Address;
  /** Raw lamports. */
  lamports: string;
  /** SOL, without trailing zeros. */
  sol: string;
}

/** Reads the balance of `owner`; an address with no account has 0. */
export async function fetchSolBalance(
  rpc: Rpc<SolanaRpcApi>,
  owner: Address,
  options: { abortSignal?: AbortSignal } = {},
): Promise<SolBalance> {
  const { value } = await rpc
    .getBalance(owner, { commitment: "confirmed" })
    .send(options);
  const lamports = BigInt(value);
  return {
    address: owner,
    lamports: lamports.toString(),
    sol: formatUnits(lamports, SOL_DECIMALS),
  };
}

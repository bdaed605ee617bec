/** A wallet's token balances per mint, summed over its accounts under Token and Token-2022. */
import type { Address, Rpc, SolanaRpcApi } from "@solana/kit";
import { formatUnits } from "./amounts.ts";
import { fetchMint, TOKEN_PROGRAMS } from "./mints.ts";

/** One entry of the tokens answer (the spec's Token balance entry). */
export interface TokenBalance {
  mint: Address;
  /** Raw base units. */
  amount: string;
  decimals: number;
  /** Token units, without trailing zeros. */
  uiAmount: string;
}

/** One token account as `getTokenAccountsByOwner` reports it (jsonParsed), reduced to what reads use. */
export interface OwnedTokenAccount {
  mint: Address;
  amount: bigint;
  decimals: number;
}

type Options = { abortSignal?: AbortSignal };

/** Every token account of `owner` under both token programs, at confirmed commitment. */
export async function fetchOwnedTokenAccounts(
  rpc: Rpc<SolanaRpcApi>,
  owner: Address,
  options: Options = {},
): Promise<OwnedTokenAccount[]> {
  const lists = await Promise.all(TOKEN_PROGRAMS.map(async (programId) => {
    const { value } = await rpc
      .getTokenAccountsByOwner(owner, { programId }, {
        commitment: "confirmed",
        encoding: "jsonParsed",
      })
      .send({ abortSignal: options.abortSignal });
    return value.map(({ account }) => {
      const { info } = account.data.parsed;
      return {
        mint: info.mint,
        amount: BigInt(info.tokenAmount.amount),
        decimals: Number(info.tokenAmount.decimals),
      };
    });
  }));
  return lists.flat();
}

/** One entry per mint the wallet has a token account for, sorted by mint. */
export async function fetchTokenBalances(
  rpc: Rpc<SolanaRpcApi>,
  owner: Address,
  options: Options = {},
): Promise<TokenBalance[]> {
  const sums = new Map<Address, { amount: bigint; decimals: number }>();
  for (const account of await fetchOwnedTokenAccounts(rpc, owner, options)) {
    const sum = sums.get(account.mint);
    if (sum) sum.amount += account.amount;
    else sums.set(account.mint, { amount: account.amount, decimals: account.decimals });
  }
  return [...sums.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([mint, { amount, decimals }]) => tokenBalance(mint, amount, decimals));
}

/**
 * The wallet's balance of one mint, zero when it holds none; null when `mint` is missing on the
 * cluster or is not a token mint.
 */
export async function fetchTokenBalanceOfMint(
  rpc: Rpc<SolanaRpcApi>,
  owner: Address,
  mint: Address,
  options: Options = {},
): Promise<TokenBalance | null> {
  const [info, accounts] = await Promise.all([
    fetchMint(rpc, mint, options),
    rpc
      .getTokenAccountsByOwner(owner, { mint }, { commitment: "confirmed", encoding: "jsonParsed" })
      .send({ abortSignal: options.abortSignal })
      .catch((e) => e as Error),
  ]);
  // Asking for accounts of a mint that is not one fails on the node, so look at the mint first.
  if (!info) return null;
  if (accounts instanceof Error) throw accounts;
  let amount = 0n;
  for (const { account } of accounts.value) {
    amount += BigInt(account.data.parsed.info.tokenAmount.amount);
  }
  return tokenBalance(mint, amount, info.decimals);
}

function tokenBalance(mint: Address, amount: bigint, decimals: number): TokenBalance {
  return { mint, amount: amount.toString(), decimals, uiAmount: formatUnits(amount, decimals) };
}

/** A wallet's token balances per mint, summed over its accounts under Token and Token-2022. */
import type { Address, Rpc, SolanaRpcApi } from "@solana/kit";
import { formatUnits } from "./amounts.ts";
import { fetchMint, TOKEN_PROGRAMS } from "./mints.ts";
import { callJsonRpc, type ReadBudget } from "./read_budget.ts";

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
interface OwnedTokenAccount {
  mint: Address;
  amount: bigint;
  decimals: number;
}

/** Where a read goes: the Kit client, and its URL for the calls read within a byte budget. */
export interface ChainSource {
  rpc: Rpc<SolanaRpcApi>;
  url: string;
}

type Options = { budget: ReadBudget; abortSignal?: AbortSignal };

type ParsedTokenAccounts = {
  value: Array<{
    account: {
      data: {
        parsed: { info: { mint: Address; tokenAmount: { amount: string; decimals: number } } };
      };
    };
  }>;
};

// The list has no size bound of its own (a wallet may hold thousands of accounts), so it is read
// with a plain JSON-RPC call whose answer is cut off at the budget; amounts are strings in
// jsonParsed, so no number precision is lost without Kit's bigint parsing.
async function scanTokenAccounts(
  source: ChainSource,
  owner: Address,
  filter: { programId: Address } | { mint: Address },
  options: Options,
): Promise<OwnedTokenAccount[]> {
  const result = await callJsonRpc(source.url, {
    method: "getTokenAccountsByOwner",
    params: [owner, filter, { commitment: "confirmed", encoding: "jsonParsed" }],
  }, options) as ParsedTokenAccounts;
  return result.value.map(({ account }) => {
    const { info } = account.data.parsed;
    return {
      mint: info.mint,
      amount: BigInt(info.tokenAmount.amount),
      decimals: Number(info.tokenAmount.decimals),
    };
  });
}

/** Every token account of `owner` under both token programs, at confirmed commitment. */
export async function fetchOwnedTokenAccounts(
  source: ChainSource,
  owner: Address,
  options: Options,
): Promise<OwnedTokenAccount[]> {
  const lists = await Promise.all(
    TOKEN_PROGRAMS.map((programId) => scanTokenAccounts(source, owner, { programId }, options)),
  );
  return lists.flat();
}

/** One entry per mint the wallet has a token account for, sorted by mint. */
export async function fetchTokenBalances(
  source: ChainSource,
  owner: Address,
  options: Options,
): Promise<TokenBalance[]> {
  const sums = new Map<Address, { amount: bigint; decimals: number }>();
  for (const account of await fetchOwnedTokenAccounts(source, owner, options)) {
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
  source: ChainSource,
  owner: Address,
  mint: Address,
  options: Options,
): Promise<TokenBalance | null> {
  options.budget.spendCall();
  const [info, accounts] = await Promise.all([
    fetchMint(source.rpc, mint, options),
    scanTokenAccounts(source, owner, { mint }, options).catch((e) => e as Error),
  ]);
  // Asking for accounts of a mint that is not one fails on the node, so look at the mint first.
  if (!info) return null;
  if (accounts instanceof Error) throw accounts;
  let amount = 0n;
  for (const account of accounts) amount += account.amount;
  return tokenBalance(mint, amount, info.decimals);
}

function tokenBalance(mint: Address, amount: bigint, decimals: number): TokenBalance {
  return { mint, amount: amount.toString(), decimals, uiAmount: formatUnits(amount, decimals) };
}

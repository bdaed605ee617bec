/**
 * Low-balance warnings for the overview and the usage page.
 *
 * SOL: the managed wallet needs the policy's hourly SOL budget plus the fees of an hour of
 * transactions. Fees are counted at their worst case per transaction (the 5,000-lamport signature
 * fee, the largest mainnet priority fee, and the rent of a recipient token account the wallet may
 * have to create) for as many transactions as the last hour had, at least 10, the sum rounded up
 * to two significant digits. A threshold the developer saves in the settings replaces that
 * estimate. Tokens: each allowed mint warns while the wallet holds less than its per-transaction
 * maximum (one more transfer could fail), unless the wallet is the mint's authority and can mint
 * more. A wallet that holds no SOL at all is not yet funded: the page says so without alarm.
 */
import type { AppContext } from "../context.ts";
import { withDeadline } from "../../core/deadline.ts";
import { formatUnits, parseUnits } from "../chain/amounts.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";
import { parseAddress } from "../chain/validation.ts";
import { fetchMint } from "../chain/mints.ts";
import { findAssetBudget, SOL_ASSET } from "../tx/request/policy.ts";
import { type TxPolicy } from "../../kv/policy.ts";
import type { Project } from "../../kv/projects.ts";
import { HOUR_WINDOW_MS } from "../../kv/tx_usage.ts";
import { getBucketUsage } from "../../kv/tx_allowance.ts";
import { readTokenSymbol } from "./wallet.ts";
import type { Address } from "@solana/kit";

/** Worst-case SOL cost of one transaction, in lamports (fee + priority fee cap + account rent). */
export const TX_COST_LAMPORTS = 5_000n + 200_000n + 2_039_280n;
/** Significant digits of the estimated SOL need (0.0224428 reads 0.023). */
const ESTIMATE_DIGITS = 2;
/** The fee estimate covers at least this many transactions an hour. */
const MIN_TX_IN_FEE_ESTIMATE = 10;
// A slow RPC node must not hold the page; the warnings are then left out.
const HOLDINGS_WAIT_MS = 4_000;

/** The managed wallet's SOL (lamports) and the tokens asked for (raw amounts, with decimals). */
export interface WalletHoldings {
  lamports: bigint;
  tokens: Map<string, { amount: bigint; decimals: number }>;
}

/** One warning, worded for the page. */
export interface LowBalanceWarning {
  asset: string;
  held: string;
  needed: string;
  why: string;
  /** A token's decimals and the symbol of its metadata (null without one); null for SOL. */
  token: { decimals: number; symbol: string | null } | null;
}

/**
 * Reads the wallet's SOL and its balance of each of `mints` (cached chain reads); null when the
 * project has no wallet or the chain did not answer in time. Mints that are not mints are left out.
 */
export async function readWalletHoldings(
  ctx: AppContext,
  project: Project,
  mints: readonly string[],
): Promise<WalletHoldings | null> {
  const owner = parseAddress(project.walletAddress ?? undefined);
  if (!owner) return null;
  const read = async (): Promise<WalletHoldings> => {
    const [sol, all] = await Promise.all([
      ctx.chain.getSolBalance(project.cluster, owner),
      ctx.chain.getTokenBalances(project.cluster, owner),
    ]);
    const tokens = new Map<string, { amount: bigint; decimals: number }>();
    for (const t of all ?? []) {
      tokens.set(t.mint, { amount: BigInt(t.amount), decimals: t.decimals });
    }
    const missing = [...new Set(mints)].filter((m) => !tokens.has(m) && parseAddress(m));
    const found = await Promise.all(
      missing.map((m) => ctx.chain.getTokenBalances(project.cluster, owner, parseAddress(m)!)),
    );
    for (const entry of found.flatMap((f) => f ?? [])) {
      tokens.set(entry.mint, { amount: BigInt(entry.amount), decimals: entry.decimals });
    }
    return { lamports: BigInt(sol.lamports), tokens };
  };
  return await withDeadline(read().catch(() => null), { ms: HOLDINGS_WAIT_MS, fallback: null });
}

/** The wallet's holdings and their warnings; null without a wallet or when the chain is slow. */
export async function readLowBalanceWarnings(
  ctx: AppContext,
  project: Project,
  policy: TxPolicy,
): Promise<{ holdings: WalletHoldings; warnings: LowBalanceWarning[] } | null> {
  const [holdings, day] = await Promise.all([
    readWalletHoldings(ctx, project, mintsOfPolicy(policy)),
    getBucketUsage(ctx.kv, project.id, "day", ctx.clock.now()),
  ]);
  if (!holdings) return null;
  // The last hour's payouts, to the 10 minutes of the day's buckets.
  const since = ctx.clock.now() - HOUR_WINDOW_MS;
  const txLastHour = Number(
    day.filter((b) => b.start >= since - 10 * 60_000).reduce((sum, b) => sum + b.n, 0n),
  );
  const threshold = project.settings.lowSolBalance ?? null;
  const input = { policy, holdings, threshold, txLastHour, mintable: new Set<string>() };
  const short = lowBalanceWarnings(input).filter((w) => w.asset !== SOL_ASSET);
  if (short.length > 0) {
    input.mintable = await mintsAuthorizedTo(ctx, project, short.map((w) => w.asset));
  }
  const warnings = await Promise.all(
    lowBalanceWarnings(input).map(async (w) =>
      w.token
        ? {
          ...w,
          token: { ...w.token, symbol: await readTokenSymbol(ctx, project, w.asset as Address) },
        }
        : w
    ),
  );
  return { holdings, warnings };
}

/** Which of `mints` the managed wallet may mint (cached with the transaction routes' mints). */
export async function mintsAuthorizedTo(
  ctx: AppContext,
  project: Project,
  mints: string[],
): Promise<Set<string>> {
  const infos = await Promise.all(mints.map((text) => {
    const mint = parseAddress(text)!;
    return ctx.tx.mints.get(project.cluster, mint, () => fetchMint(ctx.rpc[project.cluster], mint))
      .catch(() => null);
  }));
  return new Set(
    infos.filter((i) => i?.mintAuthority === project.walletAddress).map((i) => i!.address),
  );
}

/** The mints whose balances the warnings and the usage page need. */
function mintsOfPolicy(policy: TxPolicy): string[] {
  return [
    ...policy.allowedMints.map((m) => m.mint),
    ...policy.hourlyBudgets.map((b) => b.asset).filter((a) => a !== SOL_ASSET),
  ];
}

/** The warnings for these holdings; `txLastHour` sizes the fee estimate. */
export function lowBalanceWarnings(
  input: {
    policy: TxPolicy;
    holdings: WalletHoldings;
    threshold: string | null;
    txLastHour: number;
    /** Mints the wallet may mint itself: a low balance of them is no problem. */
    mintable: ReadonlySet<string>;
  },
): LowBalanceWarning[] {
  const { policy, holdings } = input;
  const warnings: LowBalanceWarning[] = [];
  const threshold = input.threshold === null ? null : parseUnits(input.threshold, SOL_DECIMALS);
  let neededSol: bigint;
  let why: string;
  if (threshold !== null) {
    neededSol = threshold;
    why = "your warning threshold in Settings";
  } else {
    const budgetText = findAssetBudget(policy, SOL_ASSET);
    const budget = budgetText === null ? 0n : parseUnits(budgetText, SOL_DECIMALS) ?? 0n;
    const count = Math.max(MIN_TX_IN_FEE_ESTIMATE, input.txLastHour);
    // An estimate reads better rounded: up, so the warning still comes before the money runs out.
    neededSol = roundUp(budget + TX_COST_LAMPORTS * BigInt(count), ESTIMATE_DIGITS);
    why = budgetText === null
      ? `fees for ${count} transactions`
      : `the hourly SOL budget of ${budgetText} SOL plus fees for ${count} transactions`;
  }
  if (holdings.lamports < neededSol) {
    warnings.push({
      asset: "SOL",
      held: formatUnits(holdings.lamports, SOL_DECIMALS),
      needed: formatUnits(neededSol, SOL_DECIMALS),
      why,
      token: null,
    });
  }
  for (const { mint, maxPerTransaction } of policy.allowedMints) {
    const held = holdings.tokens.get(mint);
    const max = held ? parseUnits(maxPerTransaction, held.decimals) : null;
    if (!held || max === null || held.amount >= max || input.mintable.has(mint)) continue;
    warnings.push({
      asset: mint,
      held: formatUnits(held.amount, held.decimals),
      needed: maxPerTransaction,
      why: "its per-transaction maximum",
      token: { decimals: held.decimals, symbol: null },
    });
  }
  return warnings;
}

/** `value` rounded up to `digits` significant digits. */
function roundUp(value: bigint, digits: number): bigint {
  const drop = value.toString().length - digits;
  if (drop <= 0) return value;
  const unit = 10n ** BigInt(drop);
  return (value + unit - 1n) / unit * unit;
}

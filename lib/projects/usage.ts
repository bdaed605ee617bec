/**
 * The figures of the usage page: how close the project is to every limit, read from counters the
 * service keeps anyway (`kv/usage.ts`, the transaction ledgers of `kv/tx_allowance.ts`) plus the
 * managed wallet's balances for the low-balance warnings (`low_balance.ts`). Nothing here scans
 * requests: each figure is one short range read or one record.
 */
import type { AppContext } from "../context.ts";
import { formatUnits, parseUnits } from "../chain/amounts.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";
import { REQUESTS_PER_DAY, REQUESTS_PER_MINUTE } from "../quota/quota_plan.ts";
import { SOL_ASSET } from "../tx/request/policy.ts";
import { type TxPolicy } from "../../kv/policy.ts";
import { MAX_TX_PER_DAY } from "../tx/request/limits.ts";
import type { Project } from "../../kv/projects.ts";
import { getBucketUsage } from "../../kv/tx_allowance.ts";
import {
  type DeliveryBucket,
  getDeliveryUsage,
  getFailedTxUsage,
  getRequestUsage,
  HOUR_MS,
  type UsageBucket,
} from "../../kv/usage.ts";
import type { WalletHoldings } from "./low_balance.ts";

/** Transactions of one hour: not failed (still counting toward the quota) and failed. */
interface TxHour {
  at: number;
  counted: number;
  failed: number;
}

/** One hourly budget's use in the rolling hour, in token units. */
interface BudgetUse {
  asset: string;
  used: string;
  budget: string;
  /** used / budget, for the bar; null when the asset's decimals could not be read. */
  fraction: number | null;
}

/** Everything the usage page charts. */
export interface UsageFigures {
  now: number;
  requests: { perMinute: UsageBucket[]; minuteLimit: number; today: number; dayLimit: number };
  tx: { perHour: TxHour[]; counted24h: number; failedShown: number; limit: number };
  budgets: BudgetUse[];
  events: DeliveryBucket[];
}

/** Reads the figures; `holdings` gives token decimals for mint budgets (null when unreadable). */
export async function loadUsageFigures(
  ctx: AppContext,
  input: { project: Project; policy: TxPolicy; holdings: WalletHoldings | null },
): Promise<UsageFigures> {
  const { project, policy, holdings } = input;
  const now = ctx.clock.now();
  await ctx.quota.settle(project.id);
  await ctx.tx.allowances.settle(project.id);
  const [requests, failed, events, day, ...budgetBuckets] = await Promise.all([
    getRequestUsage(ctx.kv, project.id, now),
    getFailedTxUsage(ctx.kv, project.id, now),
    getDeliveryUsage(ctx.kv, project.id, now),
    getBucketUsage(ctx.kv, project.id, "day", now),
    ...policy.hourlyBudgets.map((b) => getBucketUsage(ctx.kv, project.id, `asset:${b.asset}`, now)),
  ]);
  // Counted in 10-minute buckets, each shown in the hour it starts in.
  const perHour = failed.map(({ at, count }) => ({
    at,
    counted: Number(sumOf(day.filter((b) => b.start >= at && b.start < at + HOUR_MS))),
    failed: count,
  }));
  const budgets = policy.hourlyBudgets.map(({ asset, amount }, i) => {
    const decimals = asset === SOL_ASSET ? SOL_DECIMALS : holdings?.tokens.get(asset)?.decimals;
    const raw = sumOf(budgetBuckets[i] ?? []);
    if (decimals === undefined) {
      return { asset, used: `${raw} base units`, budget: amount, fraction: null };
    }
    const limit = parseUnits(amount, decimals);
    const fraction = limit ? Number(raw * 10_000n / limit) / 10_000 : null;
    return { asset, used: formatUnits(raw, decimals), budget: amount, fraction };
  });
  return {
    now,
    requests: {
      perMinute: requests.perMinute,
      minuteLimit: REQUESTS_PER_MINUTE,
      today: requests.today,
      dayLimit: REQUESTS_PER_DAY,
    },
    tx: {
      perHour,
      counted24h: Number(sumOf(day)),
      failedShown: failed.reduce((sum, h) => sum + h.count, 0),
      limit: MAX_TX_PER_DAY,
    },
    budgets,
    events,
  };
}

function sumOf(buckets: Array<{ n: bigint }>): bigint {
  return buckets.reduce((sum, bucket) => sum + bucket.n, 0n);
}

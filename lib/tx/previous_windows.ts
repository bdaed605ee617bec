/**
 * The project-wide usage windows of versions before the leased allowance (`kv/tx_usage.ts`: the
 * day's, the failures' and each asset's list of reservation times), as the allowance still reads
 * them: the store migration moves them into the ledgers (`lib/migrations/tx_usage_ledgers.ts`),
 * but during a rolling deploy instances of the previous version keep adding to them until the
 * minute sweep moves those too. Every grant of allowance counts what they hold, checked in its
 * commit, so no usage is missed while it waits to be moved.
 */
import type { AllowanceScope } from "../../kv/tx_allowance.ts";
import { scopeTiming } from "../../kv/tx_allowance.ts";
import {
  pruneWindow,
  txAssetUsageKey,
  txDayUsageKey,
  txFailedUsageKey,
  type UsageWindow,
  windowTotal,
} from "../../kv/tx_usage.ts";

/** Key of the window the previous version kept for `scope`. */
export function previousWindowKey(projectId: string, scope: AllowanceScope): Deno.KvKey {
  if (scope === "day") return txDayUsageKey(projectId);
  if (scope === "failed") return txFailedUsageKey(projectId);
  return txAssetUsageKey(projectId, scope.slice("asset:".length));
}

/** What a previous version's window still counts at `now`: its entries, or its amounts. */
export function previousVersionUsage(
  scope: AllowanceScope,
  value: unknown,
  now: number,
): bigint {
  const window = pruneWindow(value as UsageWindow | null, now - scopeTiming(scope).windowMs);
  return scope.startsWith("asset:") ? windowTotal(window) : BigInt(window.times.length);
}

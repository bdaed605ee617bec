/**
 * The project-wide usage windows of versions before the leased allowance (`kv/tx_usage.ts`: the
 * day's, the failures' and each asset's list of reservation times), as the allowance still reads
 * them: the store migration moves them into the ledgers (`lib/migrations/tx_usage_ledgers.ts`),
 * but during a rolling deploy instances of the previous version keep adding to them until the
 * minute sweep moves those too. Every grant of allowance counts what they hold, checked in its
 * commit, so no usage is missed while it waits to be moved.
 *
 * The other way round, a previous-version instance sees nothing this version takes, so before this
 * version takes anything for a project it fences the previous version out: the project's day list
 * gets `MAX_TX_PER_DAY` entries at `FENCE_TIME`, a time no reservation has. The previous version
 * counts every entry newer than 24 hours ago, so it finds the day full and refuses every payout of
 * the project (`daily_tx_quota_exceeded`) instead of passing a limit it can no longer see; this
 * version ignores those entries. The fence is written by the migration that empties the lists and
 * by every grant that finds it missing (`allowance_round.ts`), in the grant's own commit, checked
 * on the list, so a previous-version reservation either committed before it (and is counted here)
 * or retries, finds the fence and refuses. During a rolling deploy's overlap, then, payouts through
 * old instances are refused, never paid past a limit; stopping the old instances first avoids even
 * that. Bound: an old instance that rewrites the list (a release) renews its 24-hour expiry, so an
 * old instance still running more than 24 hours after its last write could pay again.
 */
import type { AllowanceScope } from "../../kv/tx_allowance.ts";
import { MAX_TX_PER_DAY } from "./limits.ts";
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

/** The fence's time: the last millisecond a JavaScript date can hold, later than any reservation. */
export const FENCE_TIME = 8_640_000_000_000_000;
/** How long a fence is kept: far longer than any rolling deploy's overlap. */
const FENCE_KEEP_MS = 30 * 24 * 60 * 60 * 1000;

/** What a previous version's window still counts at `now`: its entries, or its amounts. */
export function previousVersionUsage(
  scope: AllowanceScope,
  value: unknown,
  now: number,
): bigint {
  const window = reservationsOf(value as UsageWindow | null, now - scopeTiming(scope).windowMs);
  return scope.startsWith("asset:") ? windowTotal(window) : BigInt(window.times.length);
}

/** The window's reservations newer than `since`, the fence's entries left out. */
export function reservationsOf(window: UsageWindow | null, since: number): UsageWindow {
  // The fence's entries (the latest time there is) end the list: cut them off before pruning, so
  // a fenced list's thousand entries are not copied for every payout.
  const end = window?.times.indexOf(FENCE_TIME) ?? -1;
  const before = window && end !== -1
    ? { times: window.times.slice(0, end), amounts: window.amounts.slice(0, end) }
    : window;
  return pruneWindow(before, since);
}

/** True when the project's day list already fences the previous version out. */
export function isFenced(window: UsageWindow | null): boolean {
  let fence = 0;
  for (const time of window?.times ?? []) if (time === FENCE_TIME) fence++;
  return fence >= MAX_TX_PER_DAY;
}

/**
 * Adds to `op` the fence on the project's day list, keeping `reservations` (the previous version's
 * entries still to be counted or moved) before it.
 */
export function setDayFence(
  op: Deno.AtomicOperation,
  projectId: string,
  reservations: UsageWindow,
): void {
  const times = [...reservations.times, ...Array<number>(MAX_TX_PER_DAY).fill(FENCE_TIME)];
  op.set(txDayUsageKey(projectId), { times, amounts: [] } satisfies UsageWindow, {
    expireIn: FENCE_KEEP_MS,
  });
}

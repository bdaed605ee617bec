/**
 * What the previous release still writes while a rolling deploy runs it beside this one, and the
 * fence that stops it paying. Kept with the migrations (the one home of old shapes), on a sub-floor
 * below `lib/tx/` (ARCHITECTURE.md), so the allowance's rounds count and fence in their own commit.
 *
 * Its project-wide usage windows (`kv/tx_usage.ts`: the day's, the failures' and each asset's list
 * of reservation times) are moved into the ledgers by `tx_usage_ledgers.ts`, but its instances
 * keep adding to them until the minute sweep moves those too. Every grant of allowance counts what
 * they hold, checked in its commit, so no usage is missed while it waits to be moved.
 *
 * The other way round, a previous-release instance sees nothing this release takes, so before this
 * release takes anything for a project it fences the previous one out: the project's day list gets
 * the previous release's daily cap of entries at `FENCE_TIME`, a time no reservation has. That
 * release counts every entry newer than 24 hours ago, so it finds the day full and refuses every
 * payout of the project (`daily_tx_quota_exceeded`) instead of passing a limit it can no longer
 * see; this release ignores those entries. The fence is written by the migration that empties the
 * lists and by every grant that finds it missing (`lib/tx/allowance/allowance_round.ts`), in the grant's own
 * commit, checked on the list, so a previous-release reservation either committed before it (and
 * is counted here) or retries, finds the fence and refuses. During a rolling deploy's overlap,
 * then, payouts through old instances are refused, never paid past a limit; stopping the old
 * instances first avoids even that. Bound: an old instance that rewrites the list (a release)
 * renews its 24-hour expiry, so one still running more than 24 hours after its last write could pay
 * again.
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

/**
 * The previous version's daily cap (`MAX_TX_PER_DAY` then): its day list is full at this many
 * entries, whatever this version's cap.
 */
const PREVIOUS_MAX_TX_PER_DAY = 1_000;

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
  return fence >= PREVIOUS_MAX_TX_PER_DAY;
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
  const times = [...reservations.times, ...Array<number>(PREVIOUS_MAX_TX_PER_DAY).fill(FENCE_TIME)];
  op.set(txDayUsageKey(projectId), { times, amounts: [] } satisfies UsageWindow, {
    expireIn: FENCE_KEEP_MS,
  });
}

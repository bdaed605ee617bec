/**
 * Rolling-hour usage of the per-recipient and per-player limits: one small record per recipient
 * wallet or player listing the reservation times of attempts that have not failed. A failed
 * attempt removes its own entries, so failed transactions never count.
 *
 * The day's count, the failures' cap and each asset's budget were such lists too (the failures'
 * listing attempts that failed after they were signed, plus those not settled yet); they are now
 * leased ledgers (`tx_allowance.ts`). Their keys stay here for the store migration that moves
 * them (`lib/migrations/tx_usage_ledgers.ts`) and for what instances of the previous version
 * still write during a rolling deploy.
 */

/** The reservations of one scope inside its window, oldest first. */
export interface UsageWindow {
  times: number[];
  /** Raw amounts, parallel to `times`; empty for count-only scopes. */
  amounts: bigint[];
}

/** The per-recipient, per-player and per-asset windows. */
export const HOUR_WINDOW_MS = 60 * 60 * 1000;

/** Key of a project's 24-hour transaction count (previous versions). */
export function txDayUsageKey(projectId: string): Deno.KvKey {
  return ["tx_usage_day", projectId];
}
/** Key of a recipient wallet's hourly count. */
export function txRecipientUsageKey(projectId: string, address: string): Deno.KvKey {
  return ["tx_usage_recipient", projectId, address];
}
/** Key of a player's hourly count, across all their wallets. */
export function txPlayerUsageKey(projectId: string, userId: number): Deno.KvKey {
  return ["tx_usage_player", projectId, userId];
}
/** Key of an asset's hourly amount (`SOL` or a mint; previous versions). */
export function txAssetUsageKey(projectId: string, asset: string): Deno.KvKey {
  return ["tx_usage_asset", projectId, asset];
}

/** Key of a project's failed attempts of the last 24 hours and unsettled ones (previous versions). */
export function txFailedUsageKey(projectId: string): Deno.KvKey {
  return ["tx_usage_failed", projectId];
}

/** An empty window. */
function emptyWindow(): UsageWindow {
  return { times: [], amounts: [] };
}

/** The entries newer than `since` (older ones have left the window). */
export function pruneWindow(window: UsageWindow | null, since: number): UsageWindow {
  if (!window) return emptyWindow();
  const newer = window.times.findIndex((t) => t > since);
  const first = newer === -1 ? window.times.length : newer;
  return {
    times: window.times.slice(first),
    amounts: window.amounts.length ? window.amounts.slice(first) : [],
  };
}

/** Sum of the amounts in a window. */
export function windowTotal(window: UsageWindow): bigint {
  return window.amounts.reduce((sum, amount) => sum + amount, 0n);
}

/** Adds one reservation, keeping the times in order. */
export function addToWindow(window: UsageWindow, at: number, amount?: bigint): UsageWindow {
  const i = window.times.findLastIndex((t) => t <= at) + 1;
  const times = [...window.times.slice(0, i), at, ...window.times.slice(i)];
  if (amount === undefined) return { times, amounts: window.amounts };
  const amounts = [...window.amounts.slice(0, i), amount, ...window.amounts.slice(i)];
  return { times, amounts };
}

/** Removes one reservation made at `at` (with `amount`, for budgets); unchanged when it is gone already. */
export function removeFromWindow(window: UsageWindow, at: number, amount?: bigint): UsageWindow {
  const i = window.times.findIndex((time, j) =>
    time === at && (amount === undefined || window.amounts[j] === amount)
  );
  if (i < 0) return window;
  return {
    times: window.times.filter((_, j) => j !== i),
    amounts: window.amounts.length ? window.amounts.filter((_, j) => j !== i) : [],
  };
}

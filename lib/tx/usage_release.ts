/**
 * What settling an attempt changes in the usage the limits count (`limits.ts`): a failed attempt
 * gives back its place in every window of the spec's limits (failed transactions never count) and
 * is counted on the usage page; the daily cap on failures keeps only attempts that failed after
 * they were signed, so a confirmed one, or one that failed before signing, gives its place back.
 * A failed key found paid after all takes its place in the limits' windows again. Every window
 * changed is checked in the settling commit.
 */
import type { TxContext } from "./runtime.ts";
import { must } from "../../core/must.ts";
import type { TxRequestRecord } from "../../kv/tx_requests.ts";
import {
  addFailedWindowRemoval,
  addToWindow,
  DAY_WINDOW_MS,
  HOUR_WINDOW_MS,
  pruneWindow,
  removeFromWindow,
  txAssetUsageKey,
  txDayUsageKey,
  txFailedUsageKey,
  txPlayerUsageKey,
  txRecipientUsageKey,
  type UsageWindow,
} from "../../kv/tx_usage.ts";
import { addFailedTxUsage } from "../../kv/usage.ts";
import { countsAgainstLimits } from "./limits.ts";

/** Adds, to `op`, the usage changes of an attempt settled as `settled` at `now` (none for a withdrawal). */
export async function addSettledUsage(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  settled: TxRequestRecord,
  now: number,
): Promise<void> {
  if (!countsAgainstLimits(settled.kind)) return;
  if (settled.status === "failed") {
    await addLimitWindowChanges(ctx, op, settled, { now, change: "release" });
    addFailedTxUsage(op, settled.projectId, now);
  }
  if (settled.status === "confirmed" || !settled.signed) {
    await addFailedWindowLeave(ctx, op, settled, now);
  }
}

/**
 * Adds, to `op`, the usage of a `failed` key found paid after all (`confirmLandedAttempt`): its
 * payment counts again in every window of the limits, and its attempt leaves the failures' window.
 */
export async function addLandedUsage(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  record: TxRequestRecord,
  now: number,
): Promise<void> {
  await addLimitWindowChanges(ctx, op, record, { now, change: "restore" });
  await addFailedWindowLeave(ctx, op, record, now);
}

async function addFailedWindowLeave(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  record: TxRequestRecord,
  now: number,
): Promise<void> {
  const failed = await ctx.kv.get<UsageWindow>(txFailedUsageKey(record.projectId));
  addFailedWindowRemoval(op, failed, { at: record.usage.at, now });
}

/**
 * Adds, to `op`, an attempt's entry leaving ("release") or coming back to ("restore") every usage
 * window of the limits it counts in, each window checked.
 */
async function addLimitWindowChanges(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  record: TxRequestRecord,
  options: { now: number; change: "release" | "restore" },
): Promise<void> {
  const { now } = options;
  const { projectId, usage } = record;
  const scopes: Array<{ key: Deno.KvKey; windowMs: number; withAmount: boolean }> = [
    { key: txDayUsageKey(projectId), windowMs: DAY_WINDOW_MS, withAmount: false },
    {
      key: txRecipientUsageKey(projectId, usage.recipient),
      windowMs: HOUR_WINDOW_MS,
      withAmount: false,
    },
    { key: txAssetUsageKey(projectId, usage.asset), windowMs: HOUR_WINDOW_MS, withAmount: true },
  ];
  if (usage.userId !== null) {
    scopes.push({
      key: txPlayerUsageKey(projectId, usage.userId),
      windowMs: HOUR_WINDOW_MS,
      withAmount: false,
    });
  }
  const entries = await ctx.kv.getMany<UsageWindow[]>(scopes.map((scope) => scope.key));
  op.check(...entries);
  scopes.forEach((scope, i) => {
    const entry = must(entries[i], `getMany entry for ${scope.key.join("/")}`);
    if (!entry.value && options.change === "release") return;
    // An entry that already left its window needs no change.
    if (usage.at <= now - scope.windowMs) return;
    const live = pruneWindow(entry.value, now - scope.windowMs);
    const amount = scope.withAmount ? usage.amount : undefined;
    const window = options.change === "release"
      ? removeFromWindow(live, usage.at, amount)
      : addToWindow(live, usage.at, amount);
    op.set(scope.key, window, {
      expireIn: scope.windowMs + HOUR_WINDOW_MS,
    });
  });
}

/**
 * What settling an attempt changes in the usage the limits count (`limits.ts`; a withdrawal counts
 * in none), a failed one also counted on the usage page:
 *
 * | Settled as                   | Day, asset budget | Recipient, player | Failures' cap |
 * | ---------------------------- | ----------------- | ----------------- | ------------- |
 * | confirmed                    | kept              | kept              | given back    |
 * | failed before it was signed  | given back        | given back        | given back    |
 * | failed after it was signed   | given back        | given back        | kept          |
 * | a failed key found paid      | taken again       | taken again       | given back    |
 *
 * Project-wide places go back as blind sums into the bucket of the payout's time
 * (`kv/tx_allowance.ts`), so settling conflicts neither with reservations nor with other
 * settlements; the recipient's and player's windows change checked in the settling commit. The
 * keys of a shared transaction settle in one commit whose checks are theirs (within the store's
 * 10), so a failed one's windows are left by the `tx_release` job that commit adds, once.
 */
import type { TxContext } from "../runtime.ts";
import { log } from "../../../core/log.ts";
import { must } from "../../../core/must.ts";
import { getTxRequestEntry, type TxRequestRecord } from "../../../kv/tx_requests.ts";
import {
  addToWindow,
  HOUR_WINDOW_MS,
  pruneWindow,
  removeFromWindow,
  txPlayerUsageKey,
  txRecipientUsageKey,
  type UsageWindow,
} from "../../../kv/tx_usage.ts";
import {
  addLedgerUse,
  addRelease,
  allowanceKey,
  type AllowanceLedger,
} from "../../../kv/tx_allowance.ts";
import { addFailedTxUsage } from "../../../kv/usage.ts";
import { countsAgainstLimits } from "../request/limits.ts";
import type { JobOutcome, JobRun } from "../../job_handler.ts";
import { addTxJob, type TxReleaseJob } from "../job_payloads.ts";

/**
 * Adds, to `op`, the usage changes of an attempt settled as `settled` at `now` (none for a
 * withdrawal); `shared`: settled with the other keys of its transaction, its windows left by a job.
 */
export async function addSettledUsage(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  settled: TxRequestRecord,
  options: { now: number; shared: boolean },
): Promise<void> {
  if (!countsAgainstLimits(settled.kind)) return;
  const { now } = options;
  const { projectId, usage } = settled;
  if (settled.status === "failed") {
    if (!options.shared) await addHourWindowChanges(ctx, op, settled, { now, change: "release" });
    else if (usage.at > now - HOUR_WINDOW_MS) {
      const { key, attemptId } = settled;
      const { at, recipient, userId } = usage;
      const job = { type: "tx_release", projectId, key, attemptId, at, recipient, userId } as const;
      addTxJob(op, job, { runAt: now });
    }
    addRelease(op, { projectId, scope: "day", at: usage.at, n: 1n, now });
    addRelease(op, {
      projectId,
      scope: `asset:${usage.asset}`,
      at: usage.at,
      n: usage.amount,
      now,
    });
    addFailedTxUsage(op, projectId, now);
  }
  if (settled.status === "confirmed" || !settled.signed) {
    addRelease(op, { projectId, scope: "failed", at: usage.at, n: 1n, now });
  }
}

/**
 * Adds, to `op`, the usage of a `failed` key found paid after all (`confirmLandedAttempt`, `found_landed.ts`): its
 * payment counts again in every limit, checked on the ledgers it is added to, and its attempt
 * leaves the failures' cap.
 */
export async function addLandedUsage(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  record: TxRequestRecord,
  now: number,
): Promise<void> {
  if (!countsAgainstLimits(record.kind)) return;
  const { projectId, usage } = record;
  await addHourWindowChanges(ctx, op, record, { now, change: "restore" });
  const scopes = [
    { scope: "day" as const, n: 1n },
    { scope: `asset:${usage.asset}` as const, n: usage.amount },
  ];
  const ledgers = await ctx.kv.getMany<AllowanceLedger[]>(
    scopes.map(({ scope }) => allowanceKey(projectId, scope)),
  );
  scopes.forEach(({ scope, n }, i) => {
    addLedgerUse(op, must(ledgers[i], `ledger of ${scope}`), { scope, at: usage.at, n, now });
  });
  addRelease(op, { projectId, scope: "failed", at: usage.at, n: 1n, now });
}

/**
 * Job handler: a failed attempt of a shared transaction leaves the recipient's and the player's
 * windows, in the commit that ends the job. A key found paid on that attempt after all
 * (`confirmLandedAttempt`, `found_landed.ts`) keeps its entries; the record is checked so that change cannot slip in.
 */
export async function runTxReleaseJob(run: JobRun<TxReleaseJob, TxContext>): Promise<JobOutcome> {
  const { projectId, key, attemptId, at, recipient, userId } = run.payload;
  Object.assign(run.logFields, { projectId, idempotencyKey: key });
  const entry = await getTxRequestEntry(run.ctx.kv, projectId, key);
  const paid = entry.value?.attemptId === attemptId && entry.value.status !== "failed";
  if (paid) return { kind: "done" };
  run.op.check(entry);
  await addHourWindowChanges(run.ctx, run.op, { projectId, usage: { at, recipient, userId } }, {
    now: run.now,
    change: "release",
  });
  return {
    kind: "done",
    afterCommit: () => log("info", "Failed payout left the hourly windows", run.logFields),
  };
}

/**
 * Adds, to `op`, an attempt's entry leaving ("release") or coming back to ("restore") the
 * recipient's and the player's windows, each checked.
 */
async function addHourWindowChanges(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  record: {
    projectId: string;
    usage: Pick<TxRequestRecord["usage"], "at" | "recipient" | "userId">;
  },
  options: { now: number; change: "release" | "restore" },
): Promise<void> {
  const { now } = options;
  const { projectId, usage } = record;
  // An entry that already left its window needs no change.
  if (usage.at <= now - HOUR_WINDOW_MS) return;
  const keys = [txRecipientUsageKey(projectId, usage.recipient)];
  if (usage.userId !== null) keys.push(txPlayerUsageKey(projectId, usage.userId));
  const entries = await ctx.kv.getMany<UsageWindow[]>(keys);
  op.check(...entries);
  for (const entry of entries) {
    if (!entry.value && options.change === "release") continue;
    const live = pruneWindow(entry.value, now - HOUR_WINDOW_MS);
    const window = options.change === "release"
      ? removeFromWindow(live, usage.at)
      : addToWindow(live, usage.at);
    op.set(entry.key, window, { expireIn: 2 * HOUR_WINDOW_MS });
  }
}

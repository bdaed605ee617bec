/**
 * Background confirmation: the per-attempt check job (every 1.5 s, created with the reservation)
 * and the sweep (every 30 s, and once as soon as an instance starts) of every attempt not yet
 * final. Both run through the durable job layer, so they survive the instance that sent the
 * transaction.
 */
import type { AppContext } from "../context.ts";
import { log } from "../../core/log.ts";
import { addJob, getJobEntry } from "../../kv/jobs.ts";
import type { Signature } from "@solana/kit";
import {
  getTxRequestEntry,
  listUnsettledTx,
  txRequestKey,
  type TxRequestRecord,
  txUnsettledKey,
  type TxUnsettledRef,
} from "../../kv/tx_requests.ts";
import { rpcFailureReason } from "./chain_errors.ts";
import {
  type AttemptRef,
  attemptRef,
  isFinal,
  settleAttempt,
  updateUnsettled,
} from "./transitions.ts";
import { rpcSignal } from "./timing.ts";
import { checkAttempt, MAX_STATUS_BATCH, type StatusValue } from "./confirm.ts";
import { ABANDONED_ERROR } from "./result.ts";

/** What a check run asks of the job layer. */
export type CheckVerdict = { kind: "done" } | { kind: "again"; at: number };

/**
 * One run of an attempt's check job: abandons an unsigned attempt once its instance can no longer
 * sign it, settles or rebroadcasts a signed one, or asks to run again. The next run is due one
 * interval after this one started, so checks keep their 1.5 s pace however long a check takes.
 */
export async function runTxCheck(
  ctx: AppContext,
  ref: AttemptRef,
  jobId: string,
): Promise<CheckVerdict> {
  const startedAt = ctx.clock.now();
  const record = (await getTxRequestEntry(ctx.kv, ref.projectId, ref.key)).value;
  if (!record || record.attemptId !== ref.attemptId || isFinal(record)) return { kind: "done" };
  // Only the attempt's current job follows it; an older duplicate stops here.
  if (record.checkJobId !== jobId) return { kind: "done" };
  if (!record.signed) {
    const at = abandonTime(ctx, record);
    if (startedAt < at) return { kind: "again", at };
    const after = await abandonUnsigned(ctx, record);
    if (after && isFinal(after)) return { kind: "done" };
  } else if (isFinal(await followAttempt(ctx, record))) {
    return { kind: "done" };
  }
  return { kind: "again", at: startedAt + ctx.tx.timing.checkIntervalMs };
}

/**
 * When an unsigned attempt counts as abandoned: its sign-by time (after which its own instance no
 * longer stores a signed transaction) plus a margin for clocks. Older records have no sign-by time.
 */
function abandonTime(ctx: AppContext, record: TxRequestRecord): number {
  const timing = ctx.tx.timing;
  return (record.signBy ?? record.usage.at + timing.answerWithinMs) + timing.abandonMarginMs;
}

/**
 * Marks failed (`Abandoned before sending`, no event) an attempt whose instance died before it
 * stored a signed transaction. Such an attempt was never sent: sending only happens after that
 * record is stored, and this commit is checked against a record without it.
 */
async function abandonUnsigned(
  ctx: AppContext,
  record: TxRequestRecord,
): Promise<TxRequestRecord | null> {
  return await settleAttempt(ctx, attemptRef(record), {
    status: "failed",
    error: ABANDONED_ERROR,
  }, { onlyIf: (current) => current.signed === null });
}

/**
 * True once the attempt's route has surely answered (it marked the attempt submitted, or its
 * sign-by time, which bounds the route, is over by more than the margin for clocks): only then do
 * background paths resend it.
 */
function routeIsOver(ctx: AppContext, record: TxRequestRecord): boolean {
  if (record.status !== "pending") return true;
  const { confirmWaitMs, abandonMarginMs } = ctx.tx.timing;
  const end = record.signBy ?? (record.signed?.signedAt ?? 0) + confirmWaitMs;
  return ctx.clock.now() > end + abandonMarginMs;
}

/** One check of a signed attempt, and pending to submitted once its route is surely over. */
async function followAttempt(
  ctx: AppContext,
  record: TxRequestRecord,
  status?: StatusValue,
): Promise<TxRequestRecord> {
  const current = await checkAttempt(ctx, record, {
    rebroadcast: routeIsOver(ctx, record),
    status,
  });
  if (isFinal(current) || current.status !== "pending" || !current.signed) return current;
  if (!routeIsOver(ctx, current)) return current;
  return (await updateUnsettled(
    ctx,
    attemptRef(current),
    (r) => r.status === "pending" ? { ...r, status: "submitted" } : null,
  )) ?? current;
}

/**
 * Makes sure an unsettled attempt has a live check job (the status route calls this so a
 * `submitted` request is followed again even if its job was lost).
 */
export async function ensureTxCheck(ctx: AppContext, record: TxRequestRecord): Promise<void> {
  if (isFinal(record)) return;
  if (record.checkJobId) {
    const job = await getJobEntry(ctx.kv, record.checkJobId);
    if (job.value?.status === "pending") return;
  }
  for (let round = 0; round < 10; round++) {
    const entry = await getTxRequestEntry(ctx.kv, record.projectId, record.key);
    const current = entry.value;
    if (!current || current.attemptId !== record.attemptId || isFinal(current)) return;
    if (current.checkJobId && current.checkJobId !== record.checkJobId) return;
    const op = ctx.kv.atomic().check(entry);
    const checkJobId = addJob(op, { type: "tx_check", ...attemptRef(current) }, {
      runAt: ctx.clock.now(),
    });
    op.set(entry.key, { ...current, checkJobId });
    if ((await op.commit()).ok) {
      log("info", "Confirmation check resumed", {
        projectId: current.projectId,
        idempotencyKey: current.key,
      });
      ctx.jobWaker.wake();
      return;
    }
  }
}

/** Interval of the sweep. */
export const SWEEP_INTERVAL_MS = 30_000;
const SWEEP_CONCURRENCY = 8;

type UnsettledItem = { projectId: string; key: string } & TxUnsettledRef;

/**
 * The sweep: checks every attempt that is not final, resumes lost check jobs, and abandons an
 * unsigned attempt past its time. Statuses are read in batches of up to 256 signatures per
 * `getSignatureStatuses` call; only attempts the chain has not decided are then followed one by one.
 */
export async function sweepUnsettledTx(
  ctx: AppContext,
): Promise<{ checked: number; abandoned: number }> {
  const unsettled = await listUnsettledTx(ctx.kv);
  const open: TxRequestRecord[] = [];
  let abandoned = 0;
  for (let i = 0; i < unsettled.length; i += 10) {
    const items = unsettled.slice(i, i + 10);
    const entries = await ctx.kv.getMany<TxRequestRecord[]>(
      items.map((item) => txRequestKey(item.projectId, item.key)),
    );
    for (const [j, item] of items.entries()) {
      const record = entries[j].value;
      if (!record || record.attemptId !== item.attemptId || isFinal(record)) {
        await deleteStaleIndex(ctx, item);
      } else if (record.signed) open.push(record);
      else if (ctx.clock.now() >= abandonTime(ctx, record)) {
        const after = await abandonUnsigned(ctx, record);
        if (after?.error === ABANDONED_ERROR) abandoned++;
      } else await ensureTxCheck(ctx, record);
    }
  }
  const statuses = await readStatuses(ctx, open);
  let next = 0;
  let checked = 0;
  const lane = async () => {
    while (next < open.length) {
      const record = open[next++];
      try {
        const current = await followAttempt(ctx, record, statuses.get(record.attemptId));
        if (!isFinal(current)) await ensureTxCheck(ctx, current);
        checked++;
      } catch (error) {
        log("error", "Sweep could not check a transaction request", {
          projectId: record.projectId,
          idempotencyKey: record.key,
          error,
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, open.length) }, lane));
  return { checked, abandoned };
}

/** Statuses of the attempts' signatures by attempt id; a batch the RPC failed is left out. */
async function readStatuses(
  ctx: AppContext,
  records: TxRequestRecord[],
): Promise<Map<string, StatusValue>> {
  const found = new Map<string, StatusValue>();
  for (const cluster of new Set(records.map((r) => r.cluster))) {
    const ofCluster = records.filter((r) => r.cluster === cluster);
    for (let i = 0; i < ofCluster.length; i += MAX_STATUS_BATCH) {
      const batch = ofCluster.slice(i, i + MAX_STATUS_BATCH);
      try {
        const { value } = await ctx.rpc[cluster].getSignatureStatuses(
          batch.map((r) => r.signature as Signature),
          { searchTransactionHistory: true },
        ).send({ abortSignal: rpcSignal(ctx.tx.timing) });
        batch.forEach((r, j) => found.set(r.attemptId, value[j]));
      } catch (error) {
        log("warn", "Sweep could not read transaction statuses", {
          cluster,
          count: batch.length,
          error: rpcFailureReason(error),
        });
      }
    }
  }
  return found;
}

async function deleteStaleIndex(ctx: AppContext, item: UnsettledItem): Promise<void> {
  const entry = await ctx.kv.get<TxUnsettledRef>(txUnsettledKey(item.projectId, item.key));
  if (entry.value?.attemptId !== item.attemptId) return;
  const record = (await getTxRequestEntry(ctx.kv, item.projectId, item.key)).value;
  if (record && record.attemptId === item.attemptId && !isFinal(record)) return;
  await ctx.kv.atomic().check(entry).delete(entry.key).commit();
}

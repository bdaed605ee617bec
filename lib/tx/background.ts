/**
 * Background confirmation: the per-attempt check job (every 1.5 s) and the sweep (every 30 s) of
 * every attempt not yet final. Both run through the durable job layer, so they survive the
 * instance that sent the transaction.
 */
import type { AppContext } from "../context.ts";
import { log } from "../log.ts";
import { addJob, getJobEntry } from "../../kv/jobs.ts";
import {
  getTxRequestEntry,
  listUnsettledTx,
  type TxRequestRecord,
  txUnsettledKey,
  type TxUnsettledRef,
} from "../../kv/tx_requests.ts";
import { type AttemptRef, attemptRef, isFinal, settleAttempt, updateUnsettled } from "./settle.ts";
import { checkAttempt } from "./track.ts";
import { ABANDONED_ERROR } from "./types.ts";

/** What a check run asks of the job layer. */
export type CheckVerdict = { kind: "done" } | { kind: "again"; at: number };

/** One run of an attempt's check job: settles, rebroadcasts, or asks to run again. */
export async function runTxCheck(
  ctx: AppContext,
  ref: AttemptRef,
  jobId: string,
): Promise<CheckVerdict> {
  const record = (await getTxRequestEntry(ctx.kv, ref.projectId, ref.key)).value;
  if (!record || record.attemptId !== ref.attemptId || isFinal(record)) return { kind: "done" };
  // Only the attempt's current job follows it; an older duplicate stops here.
  if (record.checkJobId !== jobId) return { kind: "done" };
  const current = await followAttempt(ctx, record);
  if (isFinal(current)) return { kind: "done" };
  return { kind: "again", at: ctx.clock.now() + ctx.tx.timing.checkIntervalMs };
}

/** One check of a signed attempt, and pending to submitted once the route's wait is surely over. */
async function followAttempt(ctx: AppContext, record: TxRequestRecord): Promise<TxRequestRecord> {
  const current = await checkAttempt(ctx, record, { rebroadcast: true });
  if (isFinal(current) || current.status !== "pending" || !current.signed) return current;
  const waitOver = current.signed.signedAt + ctx.tx.timing.confirmWaitMs <= ctx.clock.now();
  if (!waitOver) return current;
  return (await updateUnsettled(
    ctx,
    attemptRef(current),
    (r) => r.status === "pending" ? { ...r, status: "submitted" } : null,
  )) ?? current;
}

/**
 * Makes sure a signed, unsettled attempt has a live check job (the status route calls this so a
 * `submitted` request is followed again even if its job was lost).
 */
export async function ensureTxCheck(ctx: AppContext, record: TxRequestRecord): Promise<void> {
  if (isFinal(record) || !record.signed) return;
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

/**
 * The sweep: checks every attempt that is not final, resumes lost check jobs, and marks failed
 * (`Abandoned before sending`, no event) an attempt whose instance died before it stored a signed
 * transaction. Such an attempt was never sent: sending only happens after that record is stored,
 * and the abandonment commit is checked against a record without it.
 */
export async function sweepUnsettledTx(
  ctx: AppContext,
): Promise<{ checked: number; abandoned: number }> {
  const unsettled = await listUnsettledTx(ctx.kv);
  let next = 0;
  let checked = 0;
  let abandoned = 0;
  const lane = async () => {
    while (next < unsettled.length) {
      const item = unsettled[next++];
      try {
        const outcome = await sweepOne(ctx, item);
        if (outcome === "abandoned") abandoned++;
        else if (outcome === "checked") checked++;
      } catch (error) {
        log("error", "Sweep could not check a transaction request", {
          projectId: item.projectId,
          idempotencyKey: item.key,
          error,
        });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SWEEP_CONCURRENCY, unsettled.length) }, lane));
  return { checked, abandoned };
}

async function sweepOne(
  ctx: AppContext,
  item: { projectId: string; key: string } & TxUnsettledRef,
): Promise<"checked" | "abandoned" | "stale" | "waiting"> {
  const record = (await getTxRequestEntry(ctx.kv, item.projectId, item.key)).value;
  if (!record || record.attemptId !== item.attemptId || isFinal(record)) {
    await deleteStaleIndex(ctx, item);
    return "stale";
  }
  if (!record.signed) {
    if (ctx.clock.now() - record.usage.at < ctx.tx.timing.abandonAfterMs) return "waiting";
    const after = await settleAttempt(ctx, attemptRef(record), {
      status: "failed",
      error: ABANDONED_ERROR,
    }, { onlyIf: (current) => current.signed === null });
    return after?.error === ABANDONED_ERROR ? "abandoned" : "waiting";
  }
  const current = await followAttempt(ctx, record);
  if (!isFinal(current)) await ensureTxCheck(ctx, current);
  return "checked";
}

async function deleteStaleIndex(
  ctx: AppContext,
  item: { projectId: string; key: string } & TxUnsettledRef,
): Promise<void> {
  const entry = await ctx.kv.get<TxUnsettledRef>(txUnsettledKey(item.projectId, item.key));
  if (entry.value?.attemptId !== item.attemptId) return;
  const record = (await getTxRequestEntry(ctx.kv, item.projectId, item.key)).value;
  if (record && record.attemptId === item.attemptId && !isFinal(record)) return;
  await ctx.kv.atomic().check(entry).delete(entry.key).commit();
}

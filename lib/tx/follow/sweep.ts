/**
 * The sweep of transaction attempts (every 30 s, and once as soon as an instance starts): every
 * attempt not yet final is checked, lost check jobs are resumed, and unsigned attempts past their
 * time are abandoned. It runs as one self-rescheduling job; the minute cron's sweep
 * `ensureTxSweepLoop` restarts it if it is ever lost, so the worker drives it and the cron kicks it.
 */
import type { TxContext } from "../runtime.ts";
import { forEachConcurrently } from "../../../core/concurrently.ts";
import { log } from "../../../core/log.ts";
import { must } from "../../../core/must.ts";
import { addJobReschedule, ensureLoopJob } from "../../../kv/jobs.ts";
import { KEYS_PER_CALL } from "../../../kv/get_many.ts";
import type { Signature } from "@solana/kit";
import {
  getTxRequestEntry,
  listUnsettledTx,
  txRequestKey,
  type TxRequestRecord,
  txUnsettledKey,
  type TxUnsettledRef,
} from "../../../kv/tx_requests.ts";
import { rpcFailureReason } from "../rpc/chain_errors.ts";
import { isFinal } from "../lifecycle/lifecycle.ts";
import { rpcSignal } from "../rpc/timing.ts";
import { MAX_STATUS_BATCH } from "../rpc/status_poller.ts";
import type { StatusValue } from "../rpc/expiry_proof.ts";
import { ABANDONED_ERROR } from "../lifecycle/result.ts";
import type { JobOutcome, JobRun } from "../../job_handler.ts";
import { addTxJob, type TxSweepJob } from "../job_payloads.ts";
import { abandonTime, abandonUnsigned, ensureTxConfirmJob } from "./confirm_job.ts";
import { followRound } from "./follower.ts";
/** Interval of the sweep. */
const SWEEP_INTERVAL_MS = 30_000;
const SWEEP_CONCURRENCY = 8;

type UnsettledItem = { projectId: string; key: string } & TxUnsettledRef;

/**
 * The sweep: follows every attempt that is not final, resumes lost confirmation jobs, and abandons an
 * unsigned attempt past its time. Statuses are read in batches of up to 256 signatures per
 * `getSignatureStatuses` call; only attempts the chain has not decided are then followed one by one.
 */
export async function sweepUnsettledTx(
  ctx: TxContext,
): Promise<{ checked: number; abandoned: number }> {
  const unsettled = await listUnsettledTx(ctx.kv);
  const open: TxRequestRecord[] = [];
  let abandoned = 0;
  for (let i = 0; i < unsettled.length; i += KEYS_PER_CALL) {
    const items = unsettled.slice(i, i + KEYS_PER_CALL);
    const entries = await ctx.kv.getMany<TxRequestRecord[]>(
      items.map((item) => txRequestKey(item.projectId, item.key)),
    );
    for (const [j, item] of items.entries()) {
      const record = must(entries[j], "getMany entry for an unsettled request").value;
      if (!record || record.attemptId !== item.attemptId || isFinal(record)) {
        await deleteStaleIndex(ctx, item);
      } else if (record.signed) open.push(record);
      else if (ctx.clock.now() >= abandonTime(ctx, record)) {
        const after = await abandonUnsigned(ctx, record);
        if (after?.error === ABANDONED_ERROR) abandoned++;
      } else await ensureTxConfirmJob(ctx, record);
    }
  }
  const statuses = await readStatuses(ctx, open);
  let checked = 0;
  await forEachConcurrently(open, async (record) => {
    try {
      const status = statuses.get(record.attemptId);
      // An attempt whose expiry cannot be proven is left to its own job's slower rounds, unless
      // the batch just found it: the sweep must not ask its node every 30 s what it hides.
      const current = record.expiryUnprovenAt !== undefined && !status
        ? record
        : await followRound(ctx, record, { status });
      if (!isFinal(current)) await ensureTxConfirmJob(ctx, current);
      checked++;
    } catch (error) {
      log("error", "Sweep could not check a transaction request", {
        projectId: record.projectId,
        idempotencyKey: record.key,
        error,
      });
    }
  }, { limit: SWEEP_CONCURRENCY });
  return { checked, abandoned };
}

/** Statuses of the attempts' signatures by attempt id; a batch the RPC failed is left out. */
async function readStatuses(
  ctx: TxContext,
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
        batch.forEach((r, j) => found.set(r.attemptId, value[j] ?? null));
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

async function deleteStaleIndex(ctx: TxContext, item: UnsettledItem): Promise<void> {
  const entry = await ctx.kv.get<TxUnsettledRef>(txUnsettledKey(item.projectId, item.key));
  if (entry.value?.attemptId !== item.attemptId) return;
  const record = (await getTxRequestEntry(ctx.kv, item.projectId, item.key)).value;
  if (record && record.attemptId === item.attemptId && !isFinal(record)) return;
  await ctx.kv.atomic().check(entry).delete(entry.key).commit();
}

/** The id of the one sweep loop job. */
const TX_SWEEP_JOB_ID = "tx_sweep";

/** Runs the sweep, then asks to run again in 30 s. */
export async function runTxSweepJob(run: JobRun<TxSweepJob, TxContext>): Promise<JobOutcome> {
  try {
    const result = await sweepUnsettledTx(run.ctx);
    if (result.checked || result.abandoned) log("info", "Transaction sweep done", result);
  } catch (error) {
    log("error", "Transaction sweep failed", { error });
  }
  return { kind: "continue", at: run.ctx.clock.now() + SWEEP_INTERVAL_MS };
}

/**
 * Starts the sweep loop job unless it is running; returns 1 when it (re)started it. With `now`
 * (an instance starting), a loop waiting for its next run is made due at once, so attempts a dead
 * instance left signed are followed again without waiting for its leases or the next sweep.
 */
export async function ensureTxSweepLoop(
  ctx: TxContext,
  options: { now?: boolean } = {},
): Promise<number> {
  const job = await ensureLoopJob(ctx.kv, TX_SWEEP_JOB_ID, (op) => {
    addTxJob(op, { type: "tx_sweep" }, { id: TX_SWEEP_JOB_ID, runAt: ctx.clock.now() });
  });
  if (typeof job === "boolean") {
    if (job) ctx.jobWaker.wake();
    return job ? 1 : 0;
  }
  const now = ctx.clock.now();
  const running = job.value.lease !== null && job.value.lease.expiresAt > now;
  if (!options.now || running || job.value.runAt <= now) return 0;
  const op = ctx.kv.atomic().check(job);
  addJobReschedule(op, job, { runAt: now, fresh: true });
  if (!(await op.commit()).ok) return 0;
  ctx.jobWaker.wake();
  return 1;
}

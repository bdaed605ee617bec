/**
 * The 30-second sweep of transaction attempts, as one self-rescheduling job. The minute cron's
 * sweep `ensureTxSweepLoop` restarts it if it is ever lost, so the worker drives it and the cron
 * kicks it.
 */
import type { AppContext } from "../lib/context.ts";
import { log } from "../core/log.ts";
import { SWEEP_INTERVAL_MS, sweepUnsettledTx } from "../lib/tx/check_job.ts";
import {
  addJobRemoval,
  addJobReschedule,
  enqueueJob,
  getJobEntry,
  type JobRecord,
} from "../kv/jobs.ts";
import type { JobPayloadOf } from "./payloads.ts";
import type { JobOutcome, JobRun } from "../lib/job_handler.ts";

/** The id of the one sweep loop job. */
export const TX_SWEEP_JOB_ID = "tx_sweep";

/** Runs the sweep, then asks to run again in 30 s. */
export async function runTxSweepJob(run: JobRun<JobPayloadOf<"tx_sweep">>): Promise<JobOutcome> {
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
  ctx: AppContext,
  options: { now?: boolean } = {},
): Promise<number> {
  const job = await getJobEntry(ctx.kv, TX_SWEEP_JOB_ID);
  if (job.value?.status === "pending") {
    const now = ctx.clock.now();
    const running = job.value.lease !== null && job.value.lease.expiresAt > now;
    if (!options.now || running || job.value.runAt <= now) return 0;
    const op = ctx.kv.atomic().check(job);
    addJobReschedule(op, job as Deno.KvEntry<JobRecord>, { runAt: now, fresh: true });
    if (!(await op.commit()).ok) return 0;
    ctx.jobWaker.wake();
    return 1;
  }
  if (job.value) {
    // A loop job never finishes as "done"; clear such a record so the id can be used again.
    const op = ctx.kv.atomic().check(job);
    addJobRemoval(op, job as Deno.KvEntry<JobRecord>);
    if (!(await op.commit()).ok) return 0;
  }
  const started = await enqueueJob(ctx.kv, { type: "tx_sweep" }, {
    id: TX_SWEEP_JOB_ID,
    runAt: ctx.clock.now(),
  });
  if (started) ctx.jobWaker.wake();
  return started ? 1 : 0;
}

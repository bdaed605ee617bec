/**
 * Background confirmation: the per-attempt `tx_confirm` job (every 1.5 s, created with the
 * reservation) runs the follower's background strategy (`followRound`, `follower.ts`) through the
 * durable job layer, so it survives the instance that sent the transaction; the sweep (`sweep.ts`)
 * catches whatever a lost job leaves behind.
 */
import type { TxContext } from "../runtime.ts";
import { CommitConflictError, commitWithRetry, RETRY } from "../../../core/commit_retry.ts";
import { log } from "../../../core/log.ts";
import { getJobEntry } from "../../../kv/jobs.ts";
import type { JobOutcome, JobRun } from "../../job_handler.ts";
import { addTxJob, type TxConfirmJob } from "../job_payloads.ts";
import { getTxRequestEntry, type TxRequestRecord } from "../../../kv/tx_requests.ts";
import { type AttemptRef, attemptRef, settleAttempt } from "../record/transitions.ts";
import { isFinal } from "../lifecycle/lifecycle.ts";
import { applyEvent } from "../lifecycle/apply_event.ts";
import { followRound } from "./follower.ts";
import { ABANDONED_ERROR } from "../lifecycle/result.ts";

/** What a confirmation round asks of the job layer. */
type RoundVerdict = { kind: "done" } | { kind: "again"; at: number };

/**
 * One round of an attempt's confirmation job: abandons an unsigned attempt once its instance can no longer
 * sign it, settles or rebroadcasts a signed one, or asks to run again. The next run is due one
 * interval after this one started, so rounds keep their 1.5 s pace however long a round takes.
 */
async function runConfirmRound(
  ctx: TxContext,
  ref: AttemptRef,
  jobId: string,
): Promise<RoundVerdict> {
  const startedAt = ctx.clock.now();
  const record = (await getTxRequestEntry(ctx.kv, ref.projectId, ref.key)).value;
  if (!record || record.attemptId !== ref.attemptId || isFinal(record)) return { kind: "done" };
  // Only the attempt's current job follows it; an older duplicate stops here.
  if (record.checkJobId !== jobId) return { kind: "done" };
  let current: TxRequestRecord | null = record;
  if (!record.signed) {
    const at = abandonTime(ctx, record);
    if (startedAt < at) return { kind: "again", at };
    current = await abandonUnsigned(ctx, record);
  } else {
    current = await followRound(ctx, record);
  }
  if (current && isFinal(current)) return { kind: "done" };
  return { kind: "again", at: startedAt + roundInterval(ctx, current ?? record, startedAt) };
}

// The longest wait between two rounds of an attempt whose expiry cannot be proven.
const MAX_UNPROVEN_INTERVAL_MS = 5 * 60_000;

/**
 * The wait before the next round: the confirmation interval, except for an attempt whose expiry
 * cannot be proven (its node hides its history): a tenth of the time it has waited since, between
 * that interval and 5 minutes, so such a node is not asked 40 times a minute for ever while the
 * attempt still settles soon after the truth shows.
 */
function roundInterval(ctx: TxContext, record: TxRequestRecord, now: number): number {
  const interval = ctx.tx.timing.confirmIntervalMs;
  if (record.expiryUnprovenAt === undefined) return interval;
  const waited = now - record.expiryUnprovenAt;
  return Math.min(MAX_UNPROVEN_INTERVAL_MS, Math.max(interval, waited / 10));
}

/**
 * When an unsigned attempt counts as abandoned: its sign-by time (after which its own instance no
 * longer stores a signed transaction) plus a margin for clocks.
 */
export function abandonTime(ctx: TxContext, record: TxRequestRecord): number {
  return record.signBy + ctx.tx.timing.abandonMarginMs;
}

/**
 * Marks failed (`Abandoned before sending`, no event) an attempt whose instance died before it
 * stored a signed transaction. Such an attempt was never sent: sending only happens after that
 * record is stored, and the lifecycle abandons only a reserved (unsigned) attempt, in a commit
 * checked against it.
 */
export async function abandonUnsigned(
  ctx: TxContext,
  record: TxRequestRecord,
): Promise<TxRequestRecord | null> {
  return await settleAttempt(ctx, attemptRef(record), {
    status: "failed",
    error: ABANDONED_ERROR,
  });
}

/**
 * Makes sure an unsettled attempt has a live confirmation job (the status route calls this so a
 * `submitted` request is followed again even if its job was lost).
 */
export async function ensureTxConfirmJob(ctx: TxContext, record: TxRequestRecord): Promise<void> {
  if (isFinal(record)) return;
  if (record.checkJobId) {
    const job = await getJobEntry(ctx.kv, record.checkJobId);
    if (job.value?.status === "pending") return;
  }
  try {
    await commitWithRetry("resume the confirmation check", async () => {
      const entry = await getTxRequestEntry(ctx.kv, record.projectId, record.key);
      const current = entry.value;
      if (!current || current.attemptId !== record.attemptId || isFinal(current)) return;
      if (current.checkJobId && current.checkJobId !== record.checkJobId) return;
      const op = ctx.kv.atomic().check(entry);
      const checkJobId = addTxJob(op, { type: "tx_confirm", ...attemptRef(current) }, {
        runAt: ctx.clock.now(),
      });
      op.set(entry.key, applyEvent(current, { type: "follow", checkJobId }, ctx.clock.now())!);
      if (!(await op.commit()).ok) return RETRY;
      log("info", "Confirmation check resumed", {
        projectId: current.projectId,
        idempotencyKey: current.key,
      });
      ctx.jobWaker.wake();
    }, { rounds: 10 });
  } catch (error) {
    // Giving up under contention is safe: the sweep (every 30 s) tries again.
    if (!(error instanceof CommitConflictError)) throw error;
  }
}

/** Job handler: one confirmation round; runs again 1.5 s after this run started until the attempt is final. */
export async function runTxConfirmJob(run: JobRun<TxConfirmJob, TxContext>): Promise<JobOutcome> {
  const { projectId, key, attemptId } = run.payload;
  Object.assign(run.logFields, { projectId, idempotencyKey: key });
  const verdict = await runConfirmRound(run.ctx, { projectId, key, attemptId }, run.id);
  if (verdict.kind === "done") return { kind: "done" };
  // "continue" keeps the same job id (the attempt's record points at it) and resets attempts.
  return { kind: "continue", at: verdict.at };
}

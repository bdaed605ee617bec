/**
 * Running one due job: claim it with an atomic lease (so one instance runs it at a time), run its
 * handler while the lease is renewed, and commit the outcome in the same atomic operation as the
 * handler's effects, so both land or neither does.
 */
import type { AppContext } from "../lib/context.ts";
import { log, type LogFields } from "../core/log.ts";
import {
  addJobCompletion,
  addJobRemoval,
  addJobReschedule,
  claimJob,
  getJobEntry,
  type JobLane,
  type JobPayload,
  type JobRecord,
  renewJobLease,
} from "../kv/jobs.ts";
import { deleteStaleDueEntry, type DueJob } from "../kv/job_queue.ts";
import { DeferredCommit } from "./deferred_commit.ts";
import type { JobHandlers } from "./handlers.ts";
import { jobPayloadSchema } from "./payloads.ts";
import type { JobHandler, JobOutcome, JobRun } from "../lib/job_handler.ts";

/** How a worker runs its jobs. */
export interface JobRunOptions {
  /** Name of the worker in leases and logs. */
  owner: string;
  /** How long a claim lasts; renewed every third of it while the job runs. */
  leaseMs: number;
  /** Runs after which a failing job is dropped. */
  maxAttempts: number;
  /** Handlers per job kind. */
  handlers: JobHandlers;
  /** Told, as soon as it is committed, when a job this worker ran is due again (a retry, a loop's next round). */
  dueAgain(at: number): void;
}

const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * Claims the job a due-index entry points at and runs it; false when it did not run it: a job that
 * moved, finished or is not due yet is left alone (a dangling entry is removed).
 */
export async function runDueJob(
  ctx: AppContext,
  lane: JobLane,
  due: DueJob,
  options: JobRunOptions,
): Promise<boolean> {
  const { kv, clock } = ctx;
  const entry = await getJobEntry(ctx.kv, due.id);
  const now = clock.now();
  if (
    !entry.versionstamp || entry.value.status !== "pending" || entry.value.runAt !== due.runAt
  ) {
    // The index points at a job that moved or finished in between; only a truly dangling entry is removed.
    if (!entry.versionstamp || entry.value.status !== "pending") {
      await deleteStaleDueEntry(kv, lane, due);
    }
    return false;
  }
  if (entry.value.runAt > now) return false;
  const claimed = await claimJob(kv, entry, {
    owner: options.owner,
    now,
    leaseMs: options.leaseMs,
  });
  if (!claimed) return false;
  await execute(ctx, claimed, now, options);
  return true;
}

// Runs a claimed job's handler and commits its outcome.
async function execute(
  ctx: AppContext,
  claimed: Deno.KvEntry<JobRecord>,
  now: number,
  options: JobRunOptions,
): Promise<void> {
  const job = claimed.value;
  const parsed = jobPayloadSchema.safeParse(job.payload);
  const fields: LogFields = { owner: options.owner, jobId: job.id, jobType: job.payload?.type };
  if (!parsed.success) {
    log("error", "Job dropped: invalid payload", { ...fields, problem: parsed.error.message });
    await commitOutcome(ctx, claimed, new DeferredCommit(), {
      kind: "drop",
      reason: "invalid payload",
    }, { fields, dueAgain: options.dueAgain });
    return;
  }
  const payload = parsed.data;
  if ("projectId" in payload) fields.projectId = payload.projectId;
  const handler = options.handlers[payload.type] as JobHandler<JobPayload, AppContext>;
  const effects = new DeferredCommit();
  const run: JobRun<JobPayload, AppContext> = {
    ctx,
    id: job.id,
    payload,
    attempt: job.attempts,
    now,
    op: effects,
    logFields: fields,
  };
  const lease = keepLease(ctx, claimed, options, fields);
  let outcome: JobOutcome;
  try {
    outcome = await handler(run);
  } catch (error) {
    run.op = new DeferredCommit();
    const message = error instanceof Error ? error.message : String(error);
    if (job.attempts >= options.maxAttempts) {
      log("error", "Job dropped after repeated failures", {
        ...fields,
        attempts: job.attempts,
        error,
      });
      outcome = { kind: "drop", reason: message };
    } else {
      const backoff = Math.min(1_000 * 2 ** (job.attempts - 1), MAX_BACKOFF_MS);
      log("warn", "Job failed; will retry", { ...fields, attempts: job.attempts, error });
      outcome = { kind: "retry", at: ctx.clock.now() + backoff, error: message };
    }
  }
  const current = await lease.stop();
  await commitOutcome(ctx, current, run.op as DeferredCommit, outcome, {
    fields,
    dueAgain: options.dueAgain,
  });
}

// Renews the claim every third of the lease while the handler runs; `stop` returns the latest entry.
function keepLease(
  ctx: AppContext,
  claimed: Deno.KvEntry<JobRecord>,
  options: JobRunOptions,
  fields: LogFields,
): { stop(): Promise<Deno.KvEntry<JobRecord>> } {
  const { kv, clock } = ctx;
  let current = claimed;
  let lost = false;
  let renewing = Promise.resolve();
  const renew = async () => {
    if (lost) return;
    try {
      const renewed = await renewJobLease(kv, current, {
        now: clock.now(),
        leaseMs: options.leaseMs,
      });
      if (renewed) current = renewed;
      else {
        lost = true;
        log("warn", "Job lease lost while running", fields);
      }
    } catch (error) {
      // The next renewal tries again, well before the lease ends.
      log("warn", "Job lease renewal failed", { ...fields, error });
    }
  };
  const timer = setInterval(() => {
    renewing = renewing.then(renew);
  }, Math.max(10, Math.floor(options.leaseMs / 3)));
  return {
    async stop() {
      clearInterval(timer);
      await renewing;
      return current;
    },
  };
}

// Commits the outcome with the handler's effects.
async function commitOutcome(
  ctx: AppContext,
  claimed: Deno.KvEntry<JobRecord>,
  effects: DeferredCommit,
  outcome: JobOutcome,
  { fields, dueAgain }: { fields: LogFields; dueAgain(at: number): void },
): Promise<void> {
  const { kv, clock } = ctx;
  const now = clock.now();
  const op = effects.applyTo(kv.atomic().check(claimed));
  if (outcome.kind === "done") addJobCompletion(op, claimed, now);
  else if (outcome.kind === "drop") addJobRemoval(op, claimed);
  else if (outcome.kind === "retry") {
    addJobReschedule(op, claimed, { runAt: outcome.at, error: outcome.error });
  } else {
    addJobReschedule(op, claimed, {
      runAt: outcome.at,
      fresh: true,
      // A loop's next payload is validated before it is stored, like every added job.
      payload: outcome.payload && jobPayloadSchema.parse(outcome.payload),
    });
  }

  let ok = false;
  try {
    ok = (await op.commit()).ok;
  } catch (error) {
    log("error", "Job outcome commit failed", { ...fields, error });
  }
  if (ok) {
    if (outcome.kind === "retry" || outcome.kind === "continue") dueAgain(outcome.at);
    try {
      await outcome.afterCommit?.();
    } catch (error) {
      log("warn", "Job after-commit step failed", { ...fields, error });
    }
    return;
  }
  // Either the lease was lost (another worker owns the job now: leave it alone) or one of the
  // handler's own checks failed: release the job to run again shortly, counting the attempt.
  const release = kv.atomic().check(claimed);
  addJobReschedule(release, claimed, { runAt: now + 1_000, error: "commit conflict" });
  const released = await release.commit().catch(() => ({ ok: false }));
  if (released.ok) dueAgain(now + 1_000);
  log("warn", released.ok ? "Job commit conflicted; released" : "Job lease lost", {
    ...fields,
    outcome: outcome.kind,
  });
}

/** What a job handler receives and answers, and how a domain adds its jobs. */
import { z } from "zod";
import type { LogFields } from "../core/log.ts";
import { addJob, type AddJobOptions, type JobLane, type JobPayload } from "../kv/jobs.ts";

/** One run of a claimed job, with the context `C` its domain takes (the worker holds them all). */
export interface JobRun<P extends JobPayload = JobPayload, C = unknown> {
  ctx: C;
  id: string;
  payload: P;
  /** 1 on the first run, 2 on the second, ... (reset by a `continue` outcome). */
  attempt: number;
  /** Clock time when the run started. */
  now: number;
  /**
   * The run's KV effects: add checks and mutations here (do not commit). The worker replays them
   * into the commit that ends the run, checked against its latest lease (renewed while the run
   * lasts), with the outcome appended, so both land or neither does.
   */
  op: Deno.AtomicOperation;
  /** Fields to put on every log line about this job (projectId, job type, event type...). */
  logFields: LogFields;
}

/** How a run ended; `afterCommit` runs only if the commit with the run's effects succeeded. */
export type JobOutcome =
  & (
    /** Finished: the job is removed (a unique job keeps a done record). */
    | { kind: "done" }
    /** Failed attempt: run again at `at`, counting attempts. */
    | { kind: "retry"; at: number; error: string }
    /** A loop's round finished: run again at `at` as a fresh job (attempts reset). */
    | { kind: "continue"; at: number; payload?: JobPayload }
    /** Give up or no longer needed: the job is removed entirely. */
    | { kind: "drop"; reason: string }
  )
  & { afterCommit?: (() => Promise<void> | void) | undefined };

/** Runs one kind of job. Throwing counts as a failed attempt, retried with backoff. */
export type JobHandler<P extends JobPayload = JobPayload, C = unknown> = (
  run: JobRun<P, C>,
) => Promise<JobOutcome>;

/** Adds one domain's jobs: each payload is validated by `schema` and waits in `lane`. */
export function jobAdder<P extends JobPayload>(schema: z.ZodType<P>, lane: JobLane) {
  return function addDomainJob(
    op: Deno.AtomicOperation,
    payload: P,
    options: Omit<AddJobOptions, "lane">,
  ): string {
    return addJob(op, schema.parse(payload), { ...options, lane });
  };
}

/** An id in a job payload (a project, a watch, an attempt): what the store's keys hold. */
export const payloadIdSchema = z.string().min(1).max(200);

/**
 * The job worker every instance runs: finds due jobs through the due index, claims each with an
 * atomic lease (so one instance runs it at a time), runs its handler and commits the outcome in
 * the same atomic operation as the handler's effects.
 */
import type { AppContext } from "../lib/context.ts";
import { randomToken } from "../lib/ids.ts";
import { log, type LogFields } from "../lib/log.ts";
import {
  addJobCompletion,
  addJobRemoval,
  addJobReschedule,
  claimJob,
  deleteStaleDueEntry,
  getJobEntry,
  type JobRecord,
  listDueJobs,
} from "../kv/jobs.ts";
import { jobHandlers } from "./handlers.ts";
import { jobPayloadSchema } from "./payloads.ts";
import type { JobHandler, JobHandlers, JobOutcome, JobRun } from "./types.ts";

/** Options of a `JobWorker`. */
export interface JobWorkerOptions {
  /** How often the loop looks for due jobs when nobody wakes it (default 1 s). */
  pollIntervalMs?: number;
  /** How long a claim lasts; a job whose worker died is run again after it (default 30 s). */
  leaseMs?: number;
  /** Most jobs taken per pass (default 50). */
  batchSize?: number;
  /** Most jobs run at once (default 8). */
  concurrency?: number;
  /** Runs after which a failing job is dropped (default 10). Handlers with their own schedule drop earlier. */
  maxAttempts?: number;
  /** Name of this worker in leases and logs (default random). */
  owner?: string;
  /** Handlers per job kind (default `jobHandlers`). */
  handlers?: JobHandlers;
}

const MAX_BACKOFF_MS = 5 * 60_000;

/** Runs due jobs of one KV, in a loop (`start`) or one pass at a time (`runDue`). */
export class JobWorker {
  readonly owner: string;
  #ctx: AppContext;
  #pollIntervalMs: number;
  #leaseMs: number;
  #batchSize: number;
  #concurrency: number;
  #maxAttempts: number;
  #handlers: JobHandlers;
  #running = false;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #pass: Promise<void> | null = null;
  #wakeRequested = false;
  #unsubscribe: (() => void) | null = null;

  constructor(ctx: AppContext, options: JobWorkerOptions = {}) {
    this.#ctx = ctx;
    this.owner = options.owner ?? `worker-${randomToken(6)}`;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#batchSize = options.batchSize ?? 50;
    this.#concurrency = options.concurrency ?? 8;
    this.#maxAttempts = options.maxAttempts ?? 10;
    this.#handlers = options.handlers ?? jobHandlers;
  }

  /** True while the loop runs. */
  get running(): boolean {
    return this.#running;
  }

  /** Starts the loop; it also wakes whenever `ctx.jobWaker` signals new work. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#unsubscribe = this.#ctx.jobWaker.subscribe(() => this.wake());
    this.#schedule(0);
  }

  /** Stops the loop and waits for the current pass to end; leaves no timer behind. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#pass;
  }

  /** Asks the loop to look for due jobs now (no-op when stopped). */
  wake(): void {
    if (!this.#running) return;
    if (this.#pass) {
      this.#wakeRequested = true;
      return;
    }
    this.#schedule(0);
  }

  /** Runs one pass: claims and runs up to `batchSize` due jobs; returns how many it ran. */
  async runDue(): Promise<number> {
    const now = this.#ctx.clock.now();
    const due = await listDueJobs(this.#ctx.kv, now, this.#batchSize);
    let ran = 0;
    let next = 0;
    const lane = async () => {
      while (next < due.length) {
        const item = due[next++];
        try {
          if (await this.#runOne(item.id, item.runAt)) ran++;
        } catch (error) {
          log("error", "Job worker error", { owner: this.owner, jobId: item.id, error });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#concurrency, due.length) }, lane));
    return ran;
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#pass = this.#loopPass().finally(() => {
        this.#pass = null;
      });
    }, delayMs);
  }

  async #loopPass(): Promise<void> {
    let ran = 0;
    try {
      ran = await this.runDue();
    } catch (error) {
      log("error", "Job worker pass failed", { owner: this.owner, error });
    }
    if (!this.#running) return;
    const again = this.#wakeRequested || ran >= this.#batchSize;
    this.#wakeRequested = false;
    this.#schedule(again ? 0 : this.#pollIntervalMs);
  }

  async #runOne(id: string, dueRunAt: number): Promise<boolean> {
    const { kv, clock } = this.#ctx;
    const entry = await getJobEntry(kv, id);
    const now = clock.now();
    if (!entry.versionstamp || entry.value.status !== "pending" || entry.value.runAt !== dueRunAt) {
      // The index points at a job that moved or finished in between; only a truly dangling entry is removed.
      if (!entry.versionstamp || entry.value.status !== "pending") {
        await deleteStaleDueEntry(kv, dueRunAt, id);
      }
      return false;
    }
    if (entry.value.runAt > now) return false;
    const claimed = await claimJob(kv, entry, { owner: this.owner, now, leaseMs: this.#leaseMs });
    if (!claimed) return false;
    await this.#execute(claimed, now);
    return true;
  }

  async #execute(claimed: Deno.KvEntry<JobRecord>, now: number): Promise<void> {
    const { kv, clock } = this.#ctx;
    const job = claimed.value;
    const parsed = jobPayloadSchema.safeParse(job.payload);
    const fields: LogFields = { owner: this.owner, jobId: job.id, jobType: job.payload?.type };
    if (!parsed.success) {
      log("error", "Job dropped: invalid payload", { ...fields, problem: parsed.error.message });
      await this.#commitOutcome(claimed, kv.atomic().check(claimed), {
        kind: "drop",
        reason: "invalid payload",
      }, fields);
      return;
    }
    const payload = parsed.data;
    if ("projectId" in payload) fields.projectId = payload.projectId;
    const handler = this.#handlers[payload.type] as JobHandler;
    const run: JobRun = {
      ctx: this.#ctx,
      id: job.id,
      payload,
      attempt: job.attempts,
      now,
      op: kv.atomic().check(claimed),
      logFields: fields,
    };
    let outcome: JobOutcome;
    try {
      outcome = await handler(run);
    } catch (error) {
      run.op = kv.atomic().check(claimed);
      const message = error instanceof Error ? error.message : String(error);
      if (job.attempts >= this.#maxAttempts) {
        log("error", "Job dropped after repeated failures", {
          ...fields,
          attempts: job.attempts,
          error,
        });
        outcome = { kind: "drop", reason: message };
      } else {
        const backoff = Math.min(1_000 * 2 ** (job.attempts - 1), MAX_BACKOFF_MS);
        log("warn", "Job failed; will retry", { ...fields, attempts: job.attempts, error });
        outcome = { kind: "retry", at: clock.now() + backoff, error: message };
      }
    }
    await this.#commitOutcome(claimed, run.op, outcome, fields);
  }

  async #commitOutcome(
    claimed: Deno.KvEntry<JobRecord>,
    op: Deno.AtomicOperation,
    outcome: JobOutcome,
    fields: LogFields,
  ): Promise<void> {
    const { kv, clock } = this.#ctx;
    const now = clock.now();
    if (outcome.kind === "done") addJobCompletion(op, claimed, now);
    else if (outcome.kind === "drop") addJobRemoval(op, claimed);
    else if (outcome.kind === "retry") {
      addJobReschedule(op, claimed, { runAt: outcome.at, error: outcome.error });
    } else {addJobReschedule(op, claimed, {
        runAt: outcome.at,
        fresh: true,
        payload: outcome.payload,
      });}

    let ok = false;
    try {
      ok = (await op.commit()).ok;
    } catch (error) {
      log("error", "Job outcome commit failed", { ...fields, error });
    }
    if (ok) {
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
    log("warn", released.ok ? "Job commit conflicted; released" : "Job lease lost", {
      ...fields,
      outcome: outcome.kind,
    });
  }
}

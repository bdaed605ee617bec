/**
 * The job worker every instance runs: finds due jobs through the due index of each lane and runs
 * each (`run_job.ts`: claimed with an atomic lease, so one instance runs it at a time, and its
 * outcome committed in the same atomic operation as the handler's effects).
 *
 * Order and fairness (see jobs/README.md):
 * - Each lane (`JOB_LANES`: tx, rewards, events, publisher, webhooks, watch) has its own slots, so confirmation jobs
 *   and the transaction sweep never wait behind deliveries or polls, nor event deliveries behind
 *   a slow webhook receiver; a one-off pass (`runDue`) takes the lanes in that priority order.
 * - Slots are refilled as each job ends, so a slow job (a hung publish, a long poll) holds only
 *   its own slot. Free slots go round-robin over the projects with due jobs, found through the
 *   lane's round of projects (`kv/job_queue.ts`) whatever one project's backlog, and one developer
 *   account's projects together hold at most half of a lane's slots.
 * - The loop looks every `pollIntervalMs` (for work of other instances) and also wakes exactly
 *   when a job it knows of becomes due (a retry, a loop's next round), so waits are kept to the ms.
 * - A running job's lease is renewed every third of `leaseMs`, so a long job (the sweep) is never
 *   claimed a second time while it still runs.
 */
import type { AppContext } from "../lib/context.ts";
import { forEachConcurrently } from "../core/concurrently.ts";
import { randomToken } from "../core/ids.ts";
import { log } from "../core/log.ts";
import { JOB_LANES, type JobLane } from "../kv/jobs.ts";
import { type DueJob, nextDueAt } from "../kv/job_queue.ts";
import { JobOwners, pickDueJobs, type RunningJob } from "./due_picker.ts";
import { type JobHandlers, jobHandlers } from "./handlers.ts";
import { type JobRunOptions, runDueJob } from "./run_job.ts";

/** Options of a `JobWorker`. */
export interface JobWorkerOptions {
  /** How often the loop looks for due jobs when nobody wakes it (default 1 s). */
  pollIntervalMs?: number;
  /** How long a claim lasts; renewed while the job runs; a job whose worker died runs again after it (default 30 s). */
  leaseMs?: number;
  /** Projects looked at per look at a lane, and the most jobs one `runDue` pass runs per lane (default 200). */
  batchSize?: number;
  /** Most jobs run at once per lane: one number for every lane, or per lane (default tx 8, rewards 8, events 8, publisher 8, webhooks 8, watch 4). */
  concurrency?: number | Partial<Record<JobLane, number>>;
  /** Runs after which a failing job is dropped (default 10). Handlers with their own schedule drop earlier. */
  maxAttempts?: number;
  /** Name of this worker in leases and logs (default random). */
  owner?: string;
  /** Handlers per job kind (default `jobHandlers`). */
  handlers?: JobHandlers;
}

const DEFAULT_CONCURRENCY: Record<JobLane, number> = {
  tx: 8,
  rewards: 8,
  events: 8,
  publisher: 8,
  webhooks: 8,
  watch: 4,
};

/** What the loop knows of one lane: its slots and the jobs (by id) in them. */
interface LaneState {
  limit: number;
  running: Map<string, RunningJob>;
  filling: boolean;
  again: boolean;
}

/** Runs due jobs of one KV, in a loop (`start`) or one pass at a time (`runDue`). */
export class JobWorker {
  readonly owner: string;
  #ctx: AppContext;
  #pollIntervalMs: number;
  #batchSize: number;
  #runOptions: JobRunOptions;
  #lanes: Map<JobLane, LaneState>;
  #owners: JobOwners;
  #running = false;
  #pollTimer: ReturnType<typeof setInterval> | null = null;
  #wakeTimer: ReturnType<typeof setTimeout> | null = null;
  #wakeTimerAt = Infinity;
  #tasks = new Set<Promise<unknown>>();
  #unsubscribe: (() => void) | null = null;

  constructor(ctx: AppContext, options: JobWorkerOptions = {}) {
    this.#ctx = ctx;
    this.owner = options.owner ?? `worker-${randomToken(6)}`;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.#batchSize = options.batchSize ?? 200;
    this.#runOptions = {
      owner: this.owner,
      leaseMs: options.leaseMs ?? 30_000,
      maxAttempts: options.maxAttempts ?? 10,
      handlers: options.handlers ?? jobHandlers,
      dueAgain: (at) => this.#wakeAt(at),
    };
    this.#owners = new JobOwners(ctx.kv, ctx.clock);
    const given = options.concurrency;
    const limits: Partial<Record<JobLane, number>> = typeof given === "number"
      ? Object.fromEntries(JOB_LANES.map((lane) => [lane, given]))
      : { ...DEFAULT_CONCURRENCY, ...given };
    this.#lanes = new Map(JOB_LANES.map((lane) => [lane, {
      limit: Math.max(1, limits[lane] ?? DEFAULT_CONCURRENCY[lane]),
      running: new Map(),
      filling: false,
      again: false,
    }]));
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
    this.#pollTimer = setInterval(() => this.wake(), this.#pollIntervalMs);
    this.wake();
  }

  /** Stops the loop and waits for the jobs it is running to end; leaves no timer behind. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    if (this.#pollTimer !== null) clearInterval(this.#pollTimer);
    if (this.#wakeTimer !== null) clearTimeout(this.#wakeTimer);
    this.#pollTimer = this.#wakeTimer = null;
    this.#wakeTimerAt = Infinity;
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  /** Asks the loop to fill every lane's free slots with due jobs now (no-op when stopped). */
  wake(): void {
    if (!this.#running) return;
    for (const lane of JOB_LANES) this.#track(this.#fill(lane));
  }

  /**
   * Runs one pass without the loop: every lane in priority order, up to `batchSize` due jobs
   * each (round-robin across projects, one developer's at most half), each lane's jobs at most
   * its concurrency at once. Returns how many ran.
   */
  async runDue(): Promise<number> {
    let ran = 0;
    for (const [lane, state] of this.#lanes) {
      const { picks } = await pickDueJobs(this.#ctx.kv, lane, {
        now: this.#ctx.clock.now(),
        free: this.#batchSize,
        perOwner: Math.max(1, Math.floor(this.#batchSize / 2)),
        running: new Map(),
        owners: this.#owners,
        scan: this.#batchSize,
      });
      await forEachConcurrently(picks, async ({ job }) => {
        if (await this.#runOneSafely(lane, job)) ran++;
      }, { limit: state.limit });
    }
    return ran;
  }

  #track(task: Promise<unknown>): void {
    this.#tasks.add(task);
    task.finally(() => this.#tasks.delete(task));
  }

  // One filler per lane at a time; a request while it works makes it look once more.
  async #fill(lane: JobLane): Promise<void> {
    const state = this.#lanes.get(lane)!;
    if (state.filling) {
      state.again = true;
      return;
    }
    state.filling = true;
    try {
      do {
        state.again = false;
        await this.#fillOnce(lane, state);
      } while (state.again && this.#running);
    } catch (error) {
      log("error", "Job worker could not look for due jobs", { owner: this.owner, lane, error });
    } finally {
      state.filling = false;
    }
  }

  async #fillOnce(lane: JobLane, state: LaneState): Promise<void> {
    const free = state.limit - state.running.size;
    if (!this.#running || free <= 0) return;
    const now = this.#ctx.clock.now();
    const { picks, soonest } = await pickDueJobs(this.#ctx.kv, lane, {
      now,
      free,
      perOwner: Math.max(1, Math.floor(state.limit / 2)),
      running: state.running,
      owners: this.#owners,
      scan: this.#batchSize,
    });
    for (const { job, owner } of picks) {
      if (!this.#running) return;
      state.running.set(job.id, { projectId: job.projectId, owner });
      this.#track(
        this.#runOneSafely(lane, job).finally(() => {
          state.running.delete(job.id);
          if (this.#running) this.#track(this.#fill(lane));
        }),
      );
    }
    if (soonest !== null) this.#wakeAt(soonest);
    if (picks.length < free) {
      const at = await nextDueAt(this.#ctx.kv, lane, now);
      if (at !== null) this.#wakeAt(at);
    }
  }

  // Wakes the loop at `at` (clock time) when that comes before its next regular look.
  #wakeAt(at: number): void {
    if (!this.#running) return;
    const delay = at - this.#ctx.clock.now();
    if (delay >= this.#pollIntervalMs || at >= this.#wakeTimerAt) return;
    if (this.#wakeTimer !== null) clearTimeout(this.#wakeTimer);
    this.#wakeTimerAt = at;
    this.#wakeTimer = setTimeout(() => {
      this.#wakeTimer = null;
      this.#wakeTimerAt = Infinity;
      this.wake();
    }, Math.max(0, delay));
  }

  async #runOneSafely(lane: JobLane, due: DueJob): Promise<boolean> {
    try {
      return await runDueJob(this.#ctx, lane, due, this.#runOptions);
    } catch (error) {
      log("error", "Job worker error", { owner: this.owner, jobId: due.id, error });
      return false;
    }
  }
}

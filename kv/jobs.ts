/**
 * Durable background jobs: one record per job plus a due index per lane (`job_queue.ts`).
 *
 * Lanes keep kinds of work apart (`JOB_LANES`): transaction confirmation never queues behind event
 * deliveries, watch polls or rewards' payments, nor Roblox deliveries behind a slow webhook
 * receiver, because each lane has its own index and its own worker slots. A new lane also keeps a
 * new kind from instances of the previous release during a rolling deploy: they never look at a
 * lane they do not know, so they never claim (and drop as unknown) its jobs. Within
 * a lane each project has its own queue, so a worker can share the lane fairly among projects
 * whatever the size of one project's backlog.
 *
 * A worker claims a job by moving it, in one checked commit, to "leased until T": the due entry
 * moves to T too, so a job whose worker died simply becomes due again when its lease ends. A long
 * job renews its lease the same way.
 */
import { monotonicUlid } from "../core/ids.ts";
import { addDueEntry, addDueEntryRemoval, type DueJob } from "./job_queue.ts";
import type { KvReader } from "./read_batches.ts";

/** The lanes, highest priority first. */
export const JOB_LANES = ["tx", "rewards", "events", "publisher", "webhooks", "watch"] as const;
/** A lane of the due index. */
export type JobLane = typeof JOB_LANES[number];

/**
 * A job's payload as the table stores it: its kind in `type`, the project (if any) in `projectId`.
 * The table does not know the kinds: each domain validates what it adds (`lib/tx/job_payloads.ts`,
 * `lib/events/job_payloads.ts`) and the worker validates every payload again when it claims it.
 */
export type JobPayload = { type: string; projectId?: string; [field: string]: unknown };

/** Who runs a job and until when. */
interface JobLease {
  owner: string;
  expiresAt: number;
}

/** A job as stored. */
export interface JobRecord {
  id: string;
  payload: JobPayload;
  /** The due-index lane it waits in. */
  lane: JobLane;
  /** "done" records remain only for jobs enqueued with an explicit id, to keep that id used. */
  status: "pending" | "done";
  /** When the job is due; while leased, when the lease ends. */
  runAt: number;
  /** Runs started so far (claims), including the current one. */
  attempts: number;
  lease: JobLease | null;
  /** True when enqueued with an explicit id. */
  unique: boolean;
  createdAt: number;
  lastError: string | null;
  doneAt: number | null;
}

/** Options when adding a job. */
export interface AddJobOptions {
  /** Unix ms when the job becomes due: the clock's now for "at once" (jobs of a lane run in this order). */
  runAt: number;
  /** Explicit id: the job is added only if no job (pending, or done in the last 7 days) has it. */
  id?: string;
  /** The lane it waits in, as its kind declares. */
  lane: JobLane;
}

/** How long the record of a finished unique job keeps its id taken. */
export const DONE_JOB_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Key of a job record. */
export function jobKey(id: string): Deno.KvKey {
  return ["jobs", id];
}
/** A job's entry in its lane's due index. */
export function dueJobOf(job: Pick<JobRecord, "payload" | "runAt" | "id">): DueJob {
  return { id: job.id, runAt: job.runAt, projectId: job.payload.projectId ?? "" };
}

// Appends "the job waits in its lane until its runAt" to `op`.
function addDue(op: Deno.AtomicOperation, job: JobRecord): void {
  addDueEntry(op, job.lane, dueJobOf(job));
}

// Appends "the job no longer waits where it did" to `op`.
function removeDue(op: Deno.AtomicOperation, job: JobRecord): void {
  addDueEntryRemoval(op, job.lane, dueJobOf(job));
}

/**
 * Adds a job to a caller's atomic operation, so it lands together with the caller's change.
 * With `id` this adds one check (the id is not taken); the commit fails if it is.
 */
export function addJob(
  op: Deno.AtomicOperation,
  payload: JobPayload,
  options: AddJobOptions,
): string {
  // Monotonic: jobs added in one go keep their order in the due index, so a worker starts them in
  // that order.
  const id = options.id ?? monotonicUlid();
  const runAt = options.runAt;
  const record: JobRecord = {
    id,
    payload,
    lane: options.lane,
    status: "pending",
    runAt,
    attempts: 0,
    lease: null,
    unique: options.id !== undefined,
    createdAt: Date.now(),
    lastError: null,
    doneAt: null,
  };
  if (options.id !== undefined) op.check({ key: jobKey(id), versionstamp: null });
  op.set(jobKey(id), record);
  addDue(op, record);
  return id;
}

/** Enqueues a job on its own; returns its id, or null when `options.id` is already taken. */
export async function enqueueJob(
  kv: Deno.Kv,
  payload: JobPayload,
  options: AddJobOptions,
): Promise<string | null> {
  const op = kv.atomic();
  const id = addJob(op, payload, options);
  const result = await op.commit();
  return result.ok ? id : null;
}

/** Returns a job's entry (versionstamp null when absent). */
export function getJobEntry(kv: KvReader, id: string): Promise<Deno.KvEntryMaybe<JobRecord>> {
  return kv.get<JobRecord>(jobKey(id));
}

/** Claims a due job for `owner` until `now + leaseMs`; returns the claimed entry, or null if another worker got it. */
export async function claimJob(
  kv: Deno.Kv,
  entry: Deno.KvEntry<JobRecord>,
  lease: { owner: string; now: number; leaseMs: number },
): Promise<Deno.KvEntry<JobRecord> | null> {
  const job = entry.value;
  const expiresAt = lease.now + lease.leaseMs;
  const claimed: JobRecord = {
    ...job,
    attempts: job.attempts + 1,
    lease: { owner: lease.owner, expiresAt },
    runAt: expiresAt,
  };
  return await moveJob(kv, entry, claimed);
}

// Rewrites a job and moves its due entry along, if the job did not change meanwhile.
async function moveJob(
  kv: Deno.Kv,
  entry: Deno.KvEntry<JobRecord>,
  next: JobRecord,
): Promise<Deno.KvEntry<JobRecord> | null> {
  const op = kv.atomic().check(entry);
  removeDue(op, entry.value);
  addDue(op, next);
  const result = await op.set(jobKey(next.id), next).commit();
  return result.ok ? { ...entry, value: next, versionstamp: result.versionstamp } : null;
}

/** Extends a claim to `now + leaseMs` while its job still runs; null when the lease was lost. */
export async function renewJobLease(
  kv: Deno.Kv,
  claimed: Deno.KvEntry<JobRecord>,
  lease: { now: number; leaseMs: number },
): Promise<Deno.KvEntry<JobRecord> | null> {
  const job = claimed.value;
  const expiresAt = lease.now + lease.leaseMs;
  if (!job.lease || expiresAt <= job.lease.expiresAt) return claimed;
  return await moveJob(kv, claimed, {
    ...job,
    lease: { ...job.lease, expiresAt },
    runAt: expiresAt,
  });
}

/** Appends "this job is finished" to `op` (a unique job leaves a done record for 7 days). */
export function addJobCompletion(
  op: Deno.AtomicOperation,
  claimed: Deno.KvEntry<JobRecord>,
  now: number,
): void {
  const job = claimed.value;
  removeDue(op, job);
  if (job.unique) {
    const done: JobRecord = { ...job, status: "done", lease: null, doneAt: now };
    op.set(jobKey(job.id), done, { expireIn: DONE_JOB_TTL_MS });
  } else {
    op.delete(jobKey(job.id));
  }
}

/** Appends "remove this job entirely" to `op`, freeing its id at once. */
export function addJobRemoval(op: Deno.AtomicOperation, entry: Deno.KvEntry<JobRecord>): void {
  removeDue(op, entry.value);
  op.delete(jobKey(entry.value.id));
}

/** Appends "run again at `runAt`" to `op`; `fresh` resets the attempt count (a loop's next round). */
export function addJobReschedule(
  op: Deno.AtomicOperation,
  claimed: Deno.KvEntry<JobRecord>,
  next: {
    runAt: number;
    fresh?: boolean;
    payload?: JobPayload | undefined;
    error?: string | null;
  },
): void {
  const job = claimed.value;
  const record: JobRecord = {
    ...job,
    payload: next.payload ?? job.payload,
    runAt: next.runAt,
    attempts: next.fresh ? 0 : job.attempts,
    lease: null,
    lastError: next.error ?? (next.fresh ? null : job.lastError),
  };
  removeDue(op, job);
  addDue(op, record);
  op.set(jobKey(job.id), record);
}

/**
 * Starts the self-rescheduling job `id` with `add` unless it is pending. A loop job never finishes
 * as "done", so such a record left under its id is cleared first; the id is unique, so instances
 * doing this at once start one loop. Answers the pending job's entry, `true` when this call started
 * the loop, or `false` when another writer changed the job first.
 */
export async function ensureLoopJob(
  kv: Deno.Kv,
  id: string,
  add: (op: Deno.AtomicOperation) => void,
): Promise<Deno.KvEntry<JobRecord> | boolean> {
  const job = await getJobEntry(kv, id);
  if (job.value?.status === "pending") return job as Deno.KvEntry<JobRecord>;
  if (job.value) {
    const op = kv.atomic().check(job);
    addJobRemoval(op, job as Deno.KvEntry<JobRecord>);
    if (!(await op.commit()).ok) return false;
  }
  const op = kv.atomic();
  add(op);
  return (await op.commit()).ok;
}

/** Lists pending jobs (for support tools and tests), oldest id first. */
export async function listJobs(kv: Deno.Kv): Promise<JobRecord[]> {
  const jobs: JobRecord[] = [];
  for await (const entry of kv.list<JobRecord>({ prefix: ["jobs"] })) {
    if (entry.value.status === "pending") jobs.push(entry.value);
  }
  return jobs;
}

/**
 * Durable background jobs: one record per job plus a time-ordered due index.
 *
 * A worker claims a job by moving it, in one checked commit, to "leased until T": the due entry
 * moves to T too, so a job whose worker died simply becomes due again when its lease ends.
 */
import { ulid } from "../lib/ids.ts";
import { type JobPayload, jobPayloadSchema } from "../jobs/payloads.ts";

/** Who runs a job and until when. */
export interface JobLease {
  owner: string;
  expiresAt: number;
}

/** A job as stored. */
export interface JobRecord {
  id: string;
  payload: JobPayload;
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
  /** Unix ms when the job becomes due; default 0 (as soon as a worker looks). */
  runAt?: number;
  /** Explicit id: the job is added only if no job (pending, or done in the last 7 days) has it. */
  id?: string;
}

/** How long the record of a finished unique job keeps its id taken. */
export const DONE_JOB_TTL_MS = 7 * 24 * 60 * 60 * 1000;

const ULID_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
let lastIdTime = -1;
let lastIdRandom: number[] = [];

// Monotonic ULIDs: jobs added in one go (a poll's events, oldest first) keep their order in the
// due index, so a worker starts them in that order.
function nextJobId(): string {
  const now = Date.now();
  if (now > lastIdTime) {
    lastIdTime = now;
    lastIdRandom = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b % 32);
  } else {
    let i = lastIdRandom.length - 1;
    while (i >= 0 && lastIdRandom[i] === 31) lastIdRandom[i--] = 0;
    if (i >= 0) lastIdRandom[i]++;
  }
  return ulid(lastIdTime).slice(0, 10) + lastIdRandom.map((d) => ULID_ALPHABET[d]).join("");
}

/** Key of a job record. */
export function jobKey(id: string): Deno.KvKey {
  return ["jobs", id];
}
/** Key of a job's due-index entry (value: job id). */
export function jobDueKey(runAt: number, id: string): Deno.KvKey {
  return ["jobs_due", runAt, id];
}

/**
 * Adds a job to a caller's atomic operation, so it lands together with the caller's change.
 * With `id` this adds one check (the id is not taken); the commit fails if it is.
 */
export function addJob(
  op: Deno.AtomicOperation,
  payload: JobPayload,
  options: AddJobOptions = {},
): string {
  const parsed = jobPayloadSchema.parse(payload);
  const id = options.id ?? nextJobId();
  const runAt = options.runAt ?? 0;
  const record: JobRecord = {
    id,
    payload: parsed,
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
  op.set(jobKey(id), record).set(jobDueKey(runAt, id), id);
  return id;
}

/** Enqueues a job on its own; returns its id, or null when `options.id` is already taken. */
export async function enqueueJob(
  kv: Deno.Kv,
  payload: JobPayload,
  options: AddJobOptions = {},
): Promise<string | null> {
  const op = kv.atomic();
  const id = addJob(op, payload, options);
  const result = await op.commit();
  return result.ok ? id : null;
}

/** Returns a job's entry (versionstamp null when absent). */
export function getJobEntry(kv: Deno.Kv, id: string): Promise<Deno.KvEntryMaybe<JobRecord>> {
  return kv.get<JobRecord>(jobKey(id));
}

/** Lists up to `limit` ids of jobs due at `now` (including expired leases), earliest first. */
export async function listDueJobs(
  kv: Deno.Kv,
  now: number,
  limit: number,
): Promise<{ id: string; runAt: number }[]> {
  const due: { id: string; runAt: number }[] = [];
  const iter = kv.list<string>({ prefix: ["jobs_due"], end: ["jobs_due", now + 1] }, { limit });
  for await (const entry of iter) due.push({ id: entry.value, runAt: entry.key[1] as number });
  return due;
}

/** Removes a due-index entry that points to no pending job. */
export async function deleteStaleDueEntry(kv: Deno.Kv, runAt: number, id: string): Promise<void> {
  const entry = await kv.get(jobDueKey(runAt, id));
  if (entry.versionstamp) await kv.atomic().check(entry).delete(entry.key).commit();
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
  const result = await kv.atomic()
    .check(entry)
    .delete(jobDueKey(job.runAt, job.id))
    .set(jobDueKey(expiresAt, job.id), job.id)
    .set(jobKey(job.id), claimed)
    .commit();
  return result.ok ? { ...entry, value: claimed, versionstamp: result.versionstamp } : null;
}

/** Appends "this job is finished" to `op` (a unique job leaves a done record for 7 days). */
export function addJobCompletion(
  op: Deno.AtomicOperation,
  claimed: Deno.KvEntry<JobRecord>,
  now: number,
): void {
  const job = claimed.value;
  op.delete(jobDueKey(job.runAt, job.id));
  if (job.unique) {
    const done: JobRecord = { ...job, status: "done", lease: null, doneAt: now };
    op.set(jobKey(job.id), done, { expireIn: DONE_JOB_TTL_MS });
  } else {
    op.delete(jobKey(job.id));
  }
}

/** Appends "remove this job entirely" to `op`, freeing its id at once. */
export function addJobRemoval(op: Deno.AtomicOperation, entry: Deno.KvEntry<JobRecord>): void {
  op.delete(jobDueKey(entry.value.runAt, entry.value.id)).delete(jobKey(entry.value.id));
}

/** Appends "run again at `runAt`" to `op`; `fresh` resets the attempt count (a loop's next round). */
export function addJobReschedule(
  op: Deno.AtomicOperation,
  claimed: Deno.KvEntry<JobRecord>,
  next: { runAt: number; fresh?: boolean; payload?: JobPayload; error?: string | null },
): void {
  const job = claimed.value;
  const record: JobRecord = {
    ...job,
    payload: next.payload ? jobPayloadSchema.parse(next.payload) : job.payload,
    runAt: next.runAt,
    attempts: next.fresh ? 0 : job.attempts,
    lease: null,
    lastError: next.error ?? (next.fresh ? null : job.lastError),
  };
  op.delete(jobDueKey(job.runAt, job.id))
    .set(jobDueKey(next.runAt, job.id), job.id)
    .set(jobKey(job.id), record);
}

/** Lists pending jobs (for support tools and tests), oldest id first. */
export async function listJobs(kv: Deno.Kv): Promise<JobRecord[]> {
  const jobs: JobRecord[] = [];
  for await (const entry of kv.list<JobRecord>({ prefix: ["jobs"] })) {
    if (entry.value.status === "pending") jobs.push(entry.value);
  }
  return jobs;
}

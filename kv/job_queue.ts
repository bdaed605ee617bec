/**
 * The due index of the job table: per lane, one queue per project, and a round of the projects
 * that have jobs due, so a worker finds every project's earliest work however long one project's
 * backlog is.
 *
 * - `["job_due", lane, projectId, runAt, jobId]`: a project's queue, in the order its jobs fall
 *   due. A job's entry moves with its record (claimed: to its lease end; rescheduled: to the new
 *   time) in the same commit.
 * - `["job_due_projects", lane, at, projectId]`: a marker saying "this project may have jobs due
 *   from `at` on". Every commit that writes a queue entry also sets the marker of its runAt's
 *   second (a blind set of the same value, so adders never conflict). A worker lists the markers
 *   due now, earliest first: that is the round of projects to serve, and one project's 50,000 due
 *   jobs are one marker in it, not 50,000 entries in front of everyone else.
 *
 * The rule that keeps every job reachable: a job's entry always has a marker of its project at or
 * before its runAt, or one already due. The marker set with an entry (at the start of its second)
 * is never later than the entry; the worker only removes markers already due, and of those:
 * - a later due marker of a project it has listed an earlier one for (`listDueProjects`);
 * - the marker of a project it served while others waited, moved to now (`requeueDueMarker`), so
 *   the round goes on to the others first: round-robin across projects;
 * - the marker of a project with no queue entry before the end of the current second
 *   (`dropDueMarker`): its later entries each have their own marker, never due yet.
 * Each removal is checked against the marker's versionstamp, so an adder's set in between wins.
 */

/** A lane of the due index (the kinds of work the worker keeps apart; `kv/jobs.ts`). */
type Lane = string;

/** One queue entry: which job, when, and for which project ("" for none). */
export interface DueJob {
  id: string;
  runAt: number;
  projectId: string;
}

/** A project in a lane's round: it may have jobs due from `at` on. */
export interface DueProject {
  projectId: string;
  at: number;
  versionstamp: string;
}

// Markers are per second: a backlog added over a minute makes 60 markers, not one per job.
const MARKER_SPAN_MS = 1_000;
// Removals of listed markers per commit (one check each; the self-hosted store allows 10).
const REMOVALS_PER_COMMIT = 10;

function dueKey(lane: Lane, job: DueJob): Deno.KvKey {
  return ["job_due", lane, job.projectId, job.runAt, job.id];
}

function markerKey(lane: Lane, at: number, projectId: string): Deno.KvKey {
  return ["job_due_projects", lane, at, projectId];
}

function spanStart(at: number): number {
  return Math.floor(at / MARKER_SPAN_MS) * MARKER_SPAN_MS;
}

/** Appends a job's queue entry, and its project's marker, to `op`. */
export function addDueEntry(op: Deno.AtomicOperation, lane: Lane, job: DueJob): void {
  op.set(dueKey(lane, job), job.id).set(markerKey(lane, spanStart(job.runAt), job.projectId), "");
}

/** Appends the removal of a job's queue entry to `op`. */
export function addDueEntryRemoval(op: Deno.AtomicOperation, lane: Lane, job: DueJob): void {
  op.delete(dueKey(lane, job));
}

/**
 * Lists the projects with jobs due at `now`, in the round's order (each project once, at its
 * earliest marker), from the first `limit` due markers; later markers of a listed project are
 * removed.
 */
export async function listDueProjects(
  kv: Deno.Kv,
  lane: Lane,
  options: { now: number; limit: number },
): Promise<DueProject[]> {
  const round = new Map<string, DueProject>();
  const later: Deno.KvEntry<unknown>[] = [];
  const iter = kv.list({
    prefix: ["job_due_projects", lane],
    end: ["job_due_projects", lane, options.now + 1],
  }, { limit: options.limit });
  for await (const entry of iter) {
    const projectId = entry.key[3] as string;
    if (round.has(projectId)) later.push(entry);
    else {
      round.set(projectId, {
        projectId,
        at: entry.key[2] as number,
        versionstamp: entry.versionstamp,
      });
    }
  }
  for (let i = 0; i < later.length; i += REMOVALS_PER_COMMIT) {
    const op = kv.atomic();
    for (const entry of later.slice(i, i + REMOVALS_PER_COMMIT)) op.check(entry).delete(entry.key);
    // A failed check means an adder set one of them again: they go with a later listing.
    await op.commit();
  }
  return [...round.values()];
}

/**
 * Lists up to `limit` of a project's queue entries before the end of `now`'s second, earliest
 * first: the jobs due (runAt at most `now`) and those due within the second. None means the
 * project's marker can go (`dropDueMarker`).
 */
export async function listProjectDueJobs(
  kv: Deno.Kv,
  lane: Lane,
  projectId: string,
  options: { now: number; limit: number },
): Promise<DueJob[]> {
  const jobs: DueJob[] = [];
  const end = spanStart(options.now) + MARKER_SPAN_MS;
  const iter = kv.list<string>({
    prefix: ["job_due", lane, projectId],
    end: ["job_due", lane, projectId, end],
  }, { limit: options.limit });
  for await (const entry of iter) {
    jobs.push({ id: entry.key[4] as string, runAt: entry.key[3] as number, projectId });
  }
  return jobs;
}

/** Removes a project's marker once it has nothing due within the current second; false if it changed. */
export async function dropDueMarker(
  kv: Deno.Kv,
  lane: Lane,
  project: DueProject,
): Promise<boolean> {
  const key = markerKey(lane, project.at, project.projectId);
  return (await kv.atomic().check({ key, versionstamp: project.versionstamp }).delete(key).commit())
    .ok;
}

/** Moves a served project's marker to `now`, behind the projects still waiting; false if it changed. */
export async function requeueDueMarker(
  kv: Deno.Kv,
  lane: Lane,
  project: DueProject,
  now: number,
): Promise<boolean> {
  const key = markerKey(lane, project.at, project.projectId);
  const result = await kv.atomic()
    .check({ key, versionstamp: project.versionstamp })
    .delete(key)
    .set(markerKey(lane, now, project.projectId), "")
    .commit();
  return result.ok;
}

/** When a marker of the lane next falls due after `now` (its jobs may be due a little later); null when none. */
export async function nextDueAt(kv: Deno.Kv, lane: Lane, now: number): Promise<number | null> {
  const iter = kv.list({
    prefix: ["job_due_projects", lane],
    start: ["job_due_projects", lane, now + 1],
  }, { limit: 1 });
  for await (const entry of iter) return entry.key[2] as number;
  return null;
}

/** Every queue entry of a lane, project by project (for a migration of the lane's jobs). */
export async function* listLaneDueJobs(kv: Deno.Kv, lane: Lane): AsyncGenerator<DueJob> {
  for await (const entry of kv.list<string>({ prefix: ["job_due", lane] })) {
    const [, , projectId, runAt, id] = entry.key as [string, string, string, number, string];
    yield { id, runAt, projectId };
  }
}

/** Removes a queue entry that points to no pending job. */
export async function deleteStaleDueEntry(kv: Deno.Kv, lane: Lane, job: DueJob): Promise<void> {
  const entry = await kv.get(dueKey(lane, job));
  if (entry.versionstamp) await kv.atomic().check(entry).delete(entry.key).commit();
}

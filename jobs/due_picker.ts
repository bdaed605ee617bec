/**
 * Which due jobs a worker starts next in one lane: round-robin across the projects with jobs due,
 * taken from the lane's round of projects (`kv/job_queue.ts`), never from one time-ordered list
 * that a single project's backlog could fill. All the projects one developer account owns together
 * run at most `perOwner` jobs at once, so neither a big backlog nor several free projects of one
 * account can take a lane's slots from everyone else.
 *
 * A project served while others in the round waited for a slot goes to the back of the round
 * (its marker moves to now), so a project that becomes due waits for at most one turn of each
 * project ahead of it, not for their backlogs.
 */
import type { Clock } from "../core/clock.ts";
import { TtlCache } from "../core/ttl_cache.ts";
import { getProjectOwner } from "../kv/members.ts";
import { getProject } from "../kv/projects.ts";
import {
  dropDueMarker,
  type DueJob,
  type DueProject,
  listDueProjects,
  listProjectDueJobs,
  requeueDueMarker,
} from "../kv/job_queue.ts";

/** A job the worker runs (or is about to), and the account it counts against. */
export interface RunningJob {
  projectId: string;
  owner: string;
}

/** A picked job and the account it counts against. */
interface PickedJob {
  job: DueJob;
  owner: string;
}

/**
 * The account a project's jobs count against: its owner's (`getProjectOwner`). Remembered for the
 * cache's 10 s, so a project handed over counts against its new owner within them.
 */
export class JobOwners {
  #owners: TtlCache<string>;

  constructor(private kv: Deno.Kv, clock: Clock) {
    this.#owners = new TtlCache(clock);
  }

  /** The owner of `projectId`'s jobs: `developer:<address>`, or the project itself when unknown. */
  of(projectId: string): Promise<string> {
    if (projectId === "") return Promise.resolve("");
    return this.#owners.get(projectId, async () => {
      const project = await getProject(this.kv, projectId);
      if (!project) return `project:${projectId}`;
      return `developer:${await getProjectOwner(this.kv, project)}`;
    });
  }
}

/** A project of the round with the due jobs it could start now. */
interface Candidate {
  project: DueProject;
  owner: string;
  jobs: DueJob[];
  /** More of its jobs are due than `jobs` holds. */
  more: boolean;
  taken: number;
}

/**
 * Picks up to `free` jobs of `lane` due at `now`: round-robin across the projects of the round
 * (the first `scan` of it), one job of each in turn, an account's projects together never past
 * `perOwner` running (`running`) and picked. `soonest` is the earliest time within this second a
 * listed project has a job falling due, to wake for it.
 */
export async function pickDueJobs(
  kv: Deno.Kv,
  lane: string,
  options: {
    now: number;
    free: number;
    perOwner: number;
    running: ReadonlyMap<string, RunningJob>;
    owners: JobOwners;
    scan: number;
  },
): Promise<{ picks: PickedJob[]; soonest: number | null }> {
  const { now, free, perOwner, running } = options;
  const round = await listDueProjects(kv, lane, { now, limit: options.scan });
  const byOwner = new Map<string, number>();
  const byProject = new Map<string, number>();
  for (const job of running.values()) {
    byOwner.set(job.owner, (byOwner.get(job.owner) ?? 0) + 1);
    byProject.set(job.projectId, (byProject.get(job.projectId) ?? 0) + 1);
  }
  const room = (owner: string) => perOwner - (byOwner.get(owner) ?? 0);

  // Lists the round's projects until their due jobs could fill the free slots. Every project of
  // an account with room is listed, so its projects share the account's room in turn.
  const candidates: Candidate[] = [];
  const promised = new Map<string, number>();
  let enough = 0;
  let visited = 0;
  let soonest: number | null = null;
  for (const project of round) {
    if (enough >= free) break;
    visited++;
    const owner = await options.owners.of(project.projectId);
    if (room(owner) <= 0) continue;
    const want = Math.min(room(owner), free);
    // Jobs of this project just picked may still sit in its queue until their claim moves them.
    const limit = want + (byProject.get(project.projectId) ?? 0) + 1;
    const listed = await listProjectDueJobs(kv, lane, project.projectId, { now, limit });
    if (listed.length === 0) {
      await dropDueMarker(kv, lane, project);
      continue;
    }
    const later = listed.find((job) => job.runAt > now);
    if (later && (soonest === null || later.runAt < soonest)) soonest = later.runAt;
    const due = listed.filter((job) => job.runAt <= now && !running.has(job.id));
    if (due.length === 0) continue;
    const jobs = due.slice(0, want);
    candidates.push({
      project,
      owner,
      jobs,
      more: jobs.length < due.length || listed.length === limit,
      taken: 0,
    });
    const counted = Math.max(0, Math.min(jobs.length, room(owner) - (promised.get(owner) ?? 0)));
    promised.set(owner, (promised.get(owner) ?? 0) + counted);
    enough += counted;
  }

  const picks: PickedJob[] = [];
  for (let progressed = true; progressed && picks.length < free;) {
    progressed = false;
    for (const candidate of candidates) {
      if (picks.length >= free) break;
      const job = candidate.jobs[candidate.taken];
      if (!job || room(candidate.owner) <= 0) continue;
      picks.push({ job, owner: candidate.owner });
      candidate.taken++;
      byOwner.set(candidate.owner, (byOwner.get(candidate.owner) ?? 0) + 1);
      progressed = true;
    }
  }

  // Projects of the round got no turn this time: those served with more to do go behind them.
  const starved = visited < round.length || candidates.some((c) => c.taken === 0);
  if (starved) {
    for (const c of candidates) {
      if (c.taken > 0 && (c.more || c.taken < c.jobs.length)) {
        await requeueDueMarker(kv, lane, c.project, now);
      }
    }
  }
  return { picks, soonest };
}

/**
 * Starting a project's publisher loop (`publisher.ts`): after a commit that marked events for it
 * (`record.ts`; at most once per 10 s per project on an instance) and from the minute sweep. The
 * loop's job id is unique per project, so instances starting it at once start one; its record is
 * made in the same commit, with the cursor just before the first marked event, when the project has
 * none yet. The save of the settings that turns packing or the cap on makes the record first
 * (`settings.ts`), so the sweep, which looks at every project with a record, starts a loop that the
 * instance of the first marked commit died before starting. A marking commit also pulls a waiting loop's next round forward to now (at most once a
 * second per project on an instance); a round running meanwhile may have looked before the commit,
 * and its events then wait for its next look (5 s at most).
 */
import { addJobReschedule, ensureLoopJob, getJobEntry, type JobRecord } from "../../kv/jobs.ts";
import { getProject } from "../../kv/projects.ts";
import {
  getPublisherEntry,
  listPublisherProjects,
  newPublisherState,
  publisherKey,
} from "../../kv/event_publishers.ts";
import { addPublisherJob, publisherJobId } from "./job_payloads.ts";
import type { EventContext } from "./runtime.ts";
import { log } from "../../core/log.ts";
import { publishesThroughPublisher, publishTargetOf } from "./settings.ts";

/**
 * Makes sure the project's publisher runs, its record starting after position `after` when it has
 * none; checked on this instance at most once per 10 s per project. Wakes the worker when it
 * started the loop. Never throws: it runs after the events' commit, which must not look failed; a
 * loop it could not start is started by the next marking commit or the minute sweep.
 */
export async function ensurePublisher(
  ctx: EventContext,
  projectId: string,
  options: { after: number },
): Promise<void> {
  try {
    await ctx.events.publishers.get(projectId, async () => {
      if (await startPublisher(ctx, projectId, options)) ctx.jobWaker.wake();
      return true;
    });
    await ctx.events.nudges.get(projectId, async () => {
      if (await pullForward(ctx, projectId)) ctx.jobWaker.wake();
      return true;
    });
  } catch (error) {
    log("error", "Cannot start the event publisher", { projectId, error });
  }
}

// Starts the loop unless it runs; true when this call started it. Tried twice: the first try loses
// only to another writer starting it (or making the record) at the same moment.
async function startPublisher(
  ctx: EventContext,
  projectId: string,
  options: { after: number },
): Promise<boolean> {
  for (let tries = 0; tries < 2; tries++) {
    const state = await getPublisherEntry(ctx.kv, projectId);
    const started = await ensureLoopJob(ctx.kv, publisherJobId(projectId), (op) => {
      if (state.value === null) {
        op.check(state).set(publisherKey(projectId), newPublisherState(options.after));
      }
      addPublisherJob(op, { type: "publish_events", projectId }, {
        id: publisherJobId(projectId),
        runAt: ctx.clock.now(),
      });
    });
    if (started !== false) return started === true;
  }
  throw new Error(
    `Cannot start the event publisher of project ${projectId}: the store kept changing`,
  );
}

// Moves the loop's next round to now when it waits (not leased) for a later time; true when moved.
async function pullForward(ctx: EventContext, projectId: string): Promise<boolean> {
  const job = await getJobEntry(ctx.kv, publisherJobId(projectId));
  const now = ctx.clock.now();
  if (job.value?.status !== "pending" || job.value.lease !== null || job.value.runAt <= now) {
    return false;
  }
  const op = ctx.kv.atomic().check(job);
  addJobReschedule(op, job as Deno.KvEntry<JobRecord>, { runAt: now, fresh: true });
  return (await op.commit()).ok;
}

/**
 * Restarts the publisher of every live project that packs or caps and has lost its loop (for the
 * minute cron's sweep); returns how many it restarted.
 */
export async function restartLostPublishers(ctx: EventContext): Promise<number> {
  let restarted = 0;
  for await (const projectId of listPublisherProjects(ctx.kv)) {
    const target = publishTargetOf(await getProject(ctx.kv, projectId));
    if (!target || !publishesThroughPublisher(target)) continue;
    if (await startPublisher(ctx, projectId, { after: 0 })) {
      restarted++;
      log("warn", "Event publisher loop restarted", { projectId });
    }
  }
  return restarted;
}

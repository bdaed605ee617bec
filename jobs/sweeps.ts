/** Sweeps run by the minute cron: repair what a crash or a dropped job could leave behind. */
import { addWatchPollJob } from "../lib/events/job_payloads.ts";
import type { AppContext } from "../lib/context.ts";
import { log } from "../core/log.ts";
import { addJobRemoval, getJobEntry, type JobRecord } from "../kv/jobs.ts";
import { moveOldDueEntries } from "../lib/migrations/due_index.ts";
import { getProject } from "../kv/projects.ts";
import { listAllWatches, watchPollJobId } from "../kv/watches.ts";
import { ensureTxSweepLoop } from "../lib/tx/sweep.ts";
import { resealSweep } from "../lib/crypto/reseal.ts";

/** A sweep; returns how many things it repaired. */
export type Sweep = (ctx: AppContext) => Promise<number>;

/** Restarts the poll loop of every watch (of a live project) whose poll job is gone; returns how many. */
export async function sweepWatchLoops(ctx: AppContext): Promise<number> {
  let restarted = 0;
  const live = new Map<string, boolean>();
  for await (const watch of listAllWatches(ctx.kv)) {
    if (!live.has(watch.projectId)) {
      const project = await getProject(ctx.kv, watch.projectId);
      live.set(watch.projectId, Boolean(project && project.deletedAt === null));
    }
    if (!live.get(watch.projectId)) continue;
    const id = watchPollJobId(watch.projectId, watch.id);
    const job = await getJobEntry(ctx.kv, id);
    if (job.value?.status === "pending") continue;
    if (job.value) {
      // A loop job never finishes as "done"; clear such a record so the id can be used again.
      const op = ctx.kv.atomic().check(job);
      addJobRemoval(op, job as Deno.KvEntry<JobRecord>);
      if (!(await op.commit()).ok) continue;
    }
    // The unique id makes two instances sweeping at once start one loop, not two.
    const op = ctx.kv.atomic();
    addWatchPollJob(op, { type: "watch_poll", projectId: watch.projectId, watchId: watch.id }, {
      id,
      runAt: ctx.clock.now(),
    });
    if ((await op.commit()).ok) {
      restarted++;
      log("warn", "Watch poll loop restarted", { projectId: watch.projectId, watch: watch.name });
    }
  }
  return restarted;
}

/** Every sweep the cron runs; other features add theirs here. */
export const sweeps: Record<string, Sweep> = {
  watch_loops: sweepWatchLoops,
  tx_sweep_loop: ensureTxSweepLoop,
  // Jobs queued by an earlier version (older instances may still queue some during a deploy).
  legacy_due_index: (ctx) => moveOldDueEntries(ctx.kv),
  // With SECRET_PREVIOUS: what instances still on the old SECRET sealed since the last sweep.
  secret_reseal: resealSweep,
};

/** Runs every sweep once; one failing sweep does not stop the others. */
export async function runSweeps(ctx: AppContext): Promise<Record<string, number>> {
  const results: Record<string, number> = {};
  for (const [name, sweep] of Object.entries(sweeps)) {
    try {
      results[name] = await sweep(ctx);
    } catch (error) {
      log("error", "Sweep failed", { sweep: name, error });
      results[name] = 0;
    }
  }
  return results;
}

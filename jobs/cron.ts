/**
 * The minute cron: runs the sweeps and keeps the job worker going. Every instance also runs its
 * own worker loop, so nothing depends on one instance staying alive; the cron covers instances
 * (such as Deno Deploy isolates) that are only woken by it.
 */
import type { AppContext } from "../lib/context.ts";
import { log } from "../core/log.ts";
import { runSweeps } from "./sweeps.ts";
import type { JobWorker } from "./worker.ts";

/** Name of the minute cron that main.ts registers at its top level (Deno Deploy requires that). */
export const WORKER_CRON_NAME = "blocklink-worker-kick";

/** Options of `runWorkerKick`. */
interface WorkerKickOptions {
  /** How long one kick stays busy (default 50 s): running passes itself, or holding the instance awake for its loop. */
  busyForMs?: number;
}

/**
 * One cron tick: runs the sweeps, then for `busyForMs` either wakes the running loop and waits
 * (a host that keeps an instance alive only while it handles something keeps it alive for the
 * loop), or, when no loop runs here, runs passes itself.
 */
export async function runWorkerKick(
  ctx: AppContext,
  worker: JobWorker,
  options: WorkerKickOptions = {},
): Promise<void> {
  const swept = await runSweeps(ctx);
  log("debug", "Cron sweeps done", { swept });
  worker.wake();
  const until = Date.now() + (options.busyForMs ?? 50_000);
  for (;;) {
    const ran = worker.running ? 0 : await worker.runDue();
    const left = until - Date.now();
    if (left <= 0) return;
    if (ran === 0) await new Promise((resolve) => setTimeout(resolve, Math.min(1_000, left)));
  }
}

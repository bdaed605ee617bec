/**
 * The job kind of watches, `watch_poll`, in the `watch` lane (zod and its adder only, so any
 * module can start a poll loop; the handler is in `jobs.ts`).
 */
import { z } from "zod";
import { jobAdder, payloadIdSchema } from "../job_handler.ts";
import { watchPollJobId } from "../../kv/watches.ts";

/** One poll of a watched address; it reschedules itself for as long as the watch exists. */
export const watchPollJobSchema = z.object({
  type: z.literal("watch_poll"),
  projectId: payloadIdSchema,
  watchId: payloadIdSchema,
});

/** A `watch_poll` job's payload. */
export type WatchPollJob = z.infer<typeof watchPollJobSchema>;

const addWatchPollJob = jobAdder(watchPollJobSchema, "watch");

/**
 * Adds a watch's poll loop, due at `runAt`, to the caller's atomic operation. Its id is the
 * watch's own (`watchPollJobId`), so the commit fails rather than start a second loop.
 */
export function addWatchPoll(
  op: Deno.AtomicOperation,
  watch: { projectId: string; id: string },
  runAt: number,
): void {
  addWatchPollJob(op, { type: "watch_poll", projectId: watch.projectId, watchId: watch.id }, {
    id: watchPollJobId(watch.projectId, watch.id),
    runAt,
  });
}

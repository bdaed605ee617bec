/**
 * The job kinds of events: deliveries in the `events` lane, watch polls in the `watch` lane (zod
 * and the store only, so any module can add a job; the handlers are in `jobs.ts`).
 */
import { z } from "zod";
import { addJob, type AddJobOptions } from "../../kv/jobs.ts";
import { recordedEventSchema } from "./event_schema.ts";

const id = z.string().min(1).max(200);

/** Publishes one recorded event to the project's game servers (with its own retry schedule). */
export const deliverEventJobSchema = z.object({
  type: z.literal("deliver_event"),
  projectId: id,
  event: recordedEventSchema,
});

/** Turns a batch of events into one `deliver_event` job each (keeps big polls within commit limits). */
export const publishBatchJobSchema = z.object({
  type: z.literal("publish_batch"),
  projectId: id,
  events: z.array(recordedEventSchema).min(1).max(50),
});

/** One poll of a watched address; it reschedules itself for as long as the watch exists. */
export const watchPollJobSchema = z.object({
  type: z.literal("watch_poll"),
  projectId: id,
  watchId: id,
});

/** A `deliver_event` job's payload. */
export type DeliverEventJob = z.infer<typeof deliverEventJobSchema>;
/** A `publish_batch` job's payload. */
export type PublishBatchJob = z.infer<typeof publishBatchJobSchema>;
/** A `watch_poll` job's payload. */
export type WatchPollJob = z.infer<typeof watchPollJobSchema>;

const eventJobSchema = z.discriminatedUnion("type", [deliverEventJobSchema, publishBatchJobSchema]);

/** Validates a delivery job and adds it, in the `events` lane, to the caller's atomic operation. */
export function addEventJob(
  op: Deno.AtomicOperation,
  payload: DeliverEventJob | PublishBatchJob,
  options: Omit<AddJobOptions, "lane">,
): string {
  return addJob(op, eventJobSchema.parse(payload), { ...options, lane: "events" });
}

/** Validates a watch poll job and adds it, in the `watch` lane, to the caller's atomic operation. */
export function addWatchPollJob(
  op: Deno.AtomicOperation,
  payload: WatchPollJob,
  options: Omit<AddJobOptions, "lane">,
): string {
  return addJob(op, watchPollJobSchema.parse(payload), { ...options, lane: "watch" });
}

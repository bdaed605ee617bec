/**
 * Every kind of background job, as one zod discriminated union on `type`.
 *
 * To add a kind: add its schema to `jobPayloadSchema` below and its handler to `jobHandlers` in
 * `jobs/handlers.ts` (the type checker insists on both). Schema modules must import only zod and
 * other schemas, never `kv/jobs.ts`, so the union can be built without an import cycle.
 */
import { z } from "zod";
import { recordedEventSchema } from "../lib/events/event_schema.ts";
import { txCheckJobSchema, txSweepJobSchema } from "./tx_payloads.ts";

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

/** Validates any job payload. */
export const jobPayloadSchema = z.discriminatedUnion("type", [
  deliverEventJobSchema,
  publishBatchJobSchema,
  watchPollJobSchema,
  txCheckJobSchema,
  txSweepJobSchema,
]);

/** Any job payload. */
export type JobPayload = z.infer<typeof jobPayloadSchema>;
/** The job kind names. */
export type JobType = JobPayload["type"];
/** The payload of one job kind. */
export type JobPayloadOf<T extends JobType> = Extract<JobPayload, { type: T }>;

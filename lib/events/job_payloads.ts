/**
 * The job kinds of events: deliveries in the `events` lane, the publisher loop in the `publisher`
 * lane (zod and their adders only, so any module can add a job; the handlers are in `jobs.ts`).
 */
import { z } from "zod";
import { jobAdder, payloadIdSchema } from "../job_handler.ts";
import { recordedEventSchema } from "./event_schema.ts";

/**
 * Events one commit delivers with a `deliver_event` job each, and the most a `publish_batch` job
 * carries; more in one commit go through batches, which keeps a 1,000-transaction watch poll far
 * under KV's mutation and size limits.
 */
export const DIRECT_DELIVERY_MAX = 50;

/** Publishes one recorded event to the project's game servers (with its own retry schedule). */
export const deliverEventJobSchema = z.object({
  type: z.literal("deliver_event"),
  projectId: payloadIdSchema,
  event: recordedEventSchema,
});

/** Turns a batch of events into one `deliver_event` job each (keeps big polls within commit limits). */
export const publishBatchJobSchema = z.object({
  type: z.literal("publish_batch"),
  projectId: payloadIdSchema,
  events: z.array(recordedEventSchema).min(1).max(DIRECT_DELIVERY_MAX),
});

/**
 * The loop of a project's publisher (`publisher.ts`): the one sender of its events while it packs
 * them or caps its messages a minute. Unique per project (`publisherJobId`).
 */
export const publishEventsJobSchema = z.object({
  type: z.literal("publish_events"),
  projectId: payloadIdSchema,
});

/** The id of a project's publisher loop: one per project across instances. */
export function publisherJobId(projectId: string): string {
  return `publish_events:${projectId}`;
}

/** A `deliver_event` job's payload. */
export type DeliverEventJob = z.infer<typeof deliverEventJobSchema>;
/** A `publish_batch` job's payload. */
export type PublishBatchJob = z.infer<typeof publishBatchJobSchema>;
/** A `publish_events` job's payload. */
export type PublishEventsJob = z.infer<typeof publishEventsJobSchema>;

const eventJobSchema = z.discriminatedUnion("type", [
  deliverEventJobSchema,
  publishBatchJobSchema,
]);

/** Validates a delivery job and adds it, in the `events` lane, to the caller's atomic operation. */
export const addEventJob = jobAdder(eventJobSchema, "events");

/**
 * Validates a publisher loop and adds it to the caller's atomic operation, in a lane of its own:
 * an instance of the release before the publisher knows neither the kind nor the lane, so during a
 * rolling deploy it never claims the loop (it would drop it as unknown).
 */
export const addPublisherJob = jobAdder(publishEventsJobSchema, "publisher");

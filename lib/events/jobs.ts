/** The handlers of the event job kinds (`job_payloads.ts`): deliveries and the publisher loop. */
import { runDeliverEvent, runPublishBatch } from "./deliver.ts";
import { runPublishEvents } from "./publisher.ts";

/** Handlers of `deliver_event`, `publish_batch` and `publish_events`. */
export const eventJobHandlers = {
  deliver_event: runDeliverEvent,
  publish_batch: runPublishBatch,
  publish_events: runPublishEvents,
};

/** The handlers of the event job kinds (`job_payloads.ts`): deliveries. */
import { runDeliverEvent, runPublishBatch } from "./deliver.ts";

/** Handlers of `deliver_event` and `publish_batch`. */
export const eventJobHandlers = {
  deliver_event: runDeliverEvent,
  publish_batch: runPublishBatch,
};

/** The handlers of the event job kinds (`job_payloads.ts`): deliveries and watch polls. */
import { runDeliverEvent, runPublishBatch } from "./deliver.ts";
import { runWatchPoll } from "../watches/poll.ts";

/** Handlers of `deliver_event`, `publish_batch` and `watch_poll`. */
export const eventJobHandlers = {
  deliver_event: runDeliverEvent,
  publish_batch: runPublishBatch,
  watch_poll: runWatchPoll,
};

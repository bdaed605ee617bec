/**
 * The one dispatcher: the handler of every job kind. To add a kind, add its schema in
 * `jobs/payloads.ts` and its handler here.
 */
import { runDeliverEvent, runPublishBatch } from "../lib/events/deliver.ts";
import { runWatchPoll } from "../lib/watches/poll.ts";
import { runTxCheckJob } from "./tx_check.ts";
import { runTxSweepJob } from "./tx_sweep.ts";
import type { JobHandlers } from "../lib/job_handler.ts";

/** Handlers per job kind. */
export const jobHandlers: JobHandlers = {
  deliver_event: runDeliverEvent,
  publish_batch: runPublishBatch,
  watch_poll: runWatchPoll,
  tx_check: runTxCheckJob,
  tx_sweep: runTxSweepJob,
};

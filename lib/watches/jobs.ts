/** The handler of the watch job kind (`job_payloads.ts`): the poll. */
import { runWatchPoll } from "./poll.ts";

/** Handler of `watch_poll`. */
export const watchJobHandlers = { watch_poll: runWatchPoll };

/** The one dispatcher: the handler of every job kind, as each domain declares them. */
import { eventJobHandlers } from "../lib/events/jobs.ts";
import { txJobHandlers } from "../lib/tx/jobs.ts";
import { watchJobHandlers } from "../lib/watches/jobs.ts";
import { webhookJobHandlers } from "../lib/webhooks/jobs.ts";
import { projectJobHandlers } from "../lib/projects/jobs.ts";
import { rewardJobHandlers } from "../lib/rewards/jobs.ts";
import type { JobHandler } from "../lib/job_handler.ts";
import type { AppContext } from "../lib/context.ts";
import type { JobPayloadOf, JobType } from "./payloads.ts";

/** One handler per job kind. */
export type JobHandlers = { [T in JobType]: JobHandler<JobPayloadOf<T>, AppContext> };

/** Handlers per job kind. */
export const jobHandlers: JobHandlers = {
  ...eventJobHandlers,
  ...watchJobHandlers,
  ...txJobHandlers,
  ...webhookJobHandlers,
  ...projectJobHandlers,
  ...rewardJobHandlers,
};

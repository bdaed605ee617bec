/**
 * Every kind of background job, as one zod discriminated union on `type`: the worker validates a
 * claimed job's payload against it before running its handler.
 *
 * Each domain declares its kinds (schema and lane) in its `job_payloads.ts` and their handlers in
 * its `jobs.ts`; to add a kind, add it there and list its schema here (the type checker then asks
 * for its handler in `jobs/handlers.ts`).
 */
import { z } from "zod";
import {
  deliverEventJobSchema,
  publishBatchJobSchema,
  publishEventsJobSchema,
} from "../lib/events/job_payloads.ts";
import { watchPollJobSchema } from "../lib/watches/job_payloads.ts";
import {
  txConfirmJobSchema,
  txReleaseJobSchema,
  txSweepJobSchema,
} from "../lib/tx/job_payloads.ts";
import { webhookDeliverJobSchema, webhookFanOutJobSchema } from "../lib/webhooks/job_payloads.ts";
import { revokeGameKeyJobSchema } from "../lib/projects/job_payloads.ts";
import { rewardExpireJobSchema, rewardPayJobSchema } from "../lib/rewards/job_payloads.ts";
import { rewardsOnLinkJobSchema } from "../lib/link/job_payloads.ts";

/** Validates any job payload. */
export const jobPayloadSchema = z.discriminatedUnion("type", [
  deliverEventJobSchema,
  publishBatchJobSchema,
  publishEventsJobSchema,
  watchPollJobSchema,
  txConfirmJobSchema,
  txSweepJobSchema,
  txReleaseJobSchema,
  webhookDeliverJobSchema,
  webhookFanOutJobSchema,
  revokeGameKeyJobSchema,
  rewardPayJobSchema,
  rewardExpireJobSchema,
  rewardsOnLinkJobSchema,
]);

/** Any job payload. */
type KnownJobPayload = z.infer<typeof jobPayloadSchema>;
/** The job kind names. */
export type JobType = KnownJobPayload["type"];
/** The payload of one job kind. */
export type JobPayloadOf<T extends JobType> = Extract<KnownJobPayload, { type: T }>;

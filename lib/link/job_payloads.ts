/**
 * The job a link adds when its player holds rewards (`kv/rewards.ts`), in the `rewards` lane: the
 * schema and its adder only, so the link's commit can add it; `lib/rewards/jobs.ts` runs it.
 */
import { z } from "zod";
import { jobAdder, payloadIdSchema } from "../job_handler.ts";
import { userIdSchema } from "../user_id.ts";

/** A player linked a wallet while holding rewards: pay those waiting for one. */
export const rewardsOnLinkJobSchema = z.object({
  type: z.literal("rewards_on_link"),
  projectId: payloadIdSchema,
  userId: userIdSchema,
  /** Past the first round (many rewards): the last reward its rounds took, oldest first. */
  after: z.object({ createdAt: z.number(), key: z.string() }).optional(),
});

/** A `rewards_on_link` job's payload. */
export type RewardsOnLinkJob = z.infer<typeof rewardsOnLinkJobSchema>;

/** Validates a link's job and adds it, in the `rewards` lane, to the caller's atomic operation. */
export const addLinkJob = jobAdder(rewardsOnLinkJobSchema, "rewards");

/**
 * The job kinds of rewards, in the `rewards` lane (schemas and their adder only; the handlers are
 * in `jobs.ts`). A link's job (`rewards_on_link`) is declared by `lib/link/`, which adds it. A lane
 * of their own: a payment waiting for its confirmation holds none of the `tx` lane's slots, and an
 * instance of the version before rewards, which knows no such lane, never claims (and drops) one
 * during a rolling deploy.
 */
import { z } from "zod";
import { jobAdder, payloadIdSchema } from "../job_handler.ts";
import { rewardKeySchema } from "./request_body.ts";

/** A reward's payment turn: pays it, follows its payment, or tries again later. */
export const rewardPayJobSchema = z.object({
  type: z.literal("reward_pay"),
  projectId: payloadIdSchema,
  key: rewardKeySchema,
  /** Turns it waited for room or a retry in a row, for the backoff. */
  waits: z.number().int().min(0),
});

/** A reward's expiry, due at its `expiresAt`. */
export const rewardExpireJobSchema = z.object({
  type: z.literal("reward_expire"),
  projectId: payloadIdSchema,
  key: rewardKeySchema,
});

/** A `reward_pay` job's payload. */
export type RewardPayJob = z.infer<typeof rewardPayJobSchema>;
/** A `reward_expire` job's payload. */
export type RewardExpireJob = z.infer<typeof rewardExpireJobSchema>;

const rewardJobSchema = z.discriminatedUnion("type", [rewardPayJobSchema, rewardExpireJobSchema]);

/** Validates a reward job and adds it, in the `rewards` lane, to the caller's atomic operation. */
export const addRewardJob = jobAdder(rewardJobSchema, "rewards");

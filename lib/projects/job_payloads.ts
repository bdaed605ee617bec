/**
 * The job kind of project administration, `revoke_game_key`, in the `events` lane beside the
 * game's deliveries (zod and its adder only; the handler is in `jobs.ts`).
 */
import { z } from "zod";
import { jobAdder, payloadIdSchema } from "../job_handler.ts";

/** Revokes the API key a rotation replaced in the game, once its servers' bleed-off has passed. */
export const revokeGameKeyJobSchema = z.object({
  type: z.literal("revoke_game_key"),
  projectId: payloadIdSchema,
  keyId: payloadIdSchema,
  /** The member who rotated it, named in the audit entry. */
  rotatedBy: payloadIdSchema,
});

/** A `revoke_game_key` job's payload. */
export type RevokeGameKeyJob = z.infer<typeof revokeGameKeyJobSchema>;

/** Adds a `revoke_game_key` job, due at `runAt`, to the caller's atomic operation. */
export const addRevokeGameKeyJob = jobAdder(revokeGameKeyJobSchema, "events");

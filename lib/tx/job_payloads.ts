/**
 * The job kinds of transaction confirmation tracking and of a shared failure's usage, in the `tx` lane (schemas and their adder only,
 * so any module of `lib/tx` can add a job; the handlers are in `jobs.ts`).
 */
import { z } from "zod";
import { jobAdder, payloadIdSchema } from "../job_handler.ts";
import { idempotencyKeySchema } from "./request/request_body.ts";

/** One confirmation round of an attempt; it runs again every 1.5 s until the attempt is final. */
export const txConfirmJobSchema = z.object({
  type: z.literal("tx_confirm"),
  projectId: payloadIdSchema,
  key: idempotencyKeySchema,
  attemptId: payloadIdSchema,
});

/** The sweep of every attempt not yet final; it runs again every 30 s. */
export const txSweepJobSchema = z.object({ type: z.literal("tx_sweep") });

/**
 * A failed attempt of a shared transaction leaving the recipient's and the player's windows
 * (`usage_release.ts`): its reservation's time and the windows' keys.
 */
export const txReleaseJobSchema = z.object({
  type: z.literal("tx_release"),
  projectId: payloadIdSchema,
  key: idempotencyKeySchema,
  attemptId: payloadIdSchema,
  at: z.number(),
  recipient: payloadIdSchema,
  userId: z.number().int().nullable(),
});

/** A `tx_confirm` job's payload. */
export type TxConfirmJob = z.infer<typeof txConfirmJobSchema>;
/** A `tx_sweep` job's payload. */
export type TxSweepJob = z.infer<typeof txSweepJobSchema>;
/** A `tx_release` job's payload. */
export type TxReleaseJob = z.infer<typeof txReleaseJobSchema>;

const txJobSchema = z.discriminatedUnion("type", [
  txConfirmJobSchema,
  txSweepJobSchema,
  txReleaseJobSchema,
]);

/** Validates a transaction job and adds it, in the `tx` lane, to the caller's atomic operation. */
export const addTxJob = jobAdder(txJobSchema, "tx");

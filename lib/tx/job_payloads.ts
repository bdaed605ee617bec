/**
 * The job kinds of transaction confirmation tracking, in the `tx` lane (schemas and their adder only,
 * so any module of `lib/tx` can add a job; the handlers are in `jobs.ts`).
 */
import { z } from "zod";
import { jobAdder, payloadIdSchema } from "../job_handler.ts";
import { idempotencyKeySchema } from "./request_body.ts";

/** One confirmation round of an attempt; it runs again every 1.5 s until the attempt is final. */
export const txConfirmJobSchema = z.object({
  type: z.literal("tx_confirm"),
  projectId: payloadIdSchema,
  key: idempotencyKeySchema,
  attemptId: payloadIdSchema,
});

/** The sweep of every attempt not yet final; it runs again every 30 s. */
export const txSweepJobSchema = z.object({ type: z.literal("tx_sweep") });

/** A `tx_confirm` job's payload. */
export type TxConfirmJob = z.infer<typeof txConfirmJobSchema>;
/** A `tx_sweep` job's payload. */
export type TxSweepJob = z.infer<typeof txSweepJobSchema>;

const txJobSchema = z.discriminatedUnion("type", [txConfirmJobSchema, txSweepJobSchema]);

/** Validates a transaction job and adds it, in the `tx` lane, to the caller's atomic operation. */
export const addTxJob = jobAdder(txJobSchema, "tx");

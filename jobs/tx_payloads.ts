/** Job payloads of transaction confirmation tracking (zod only, see `jobs/payloads.ts`). */
import { z } from "zod";

/** One check of an attempt's transaction; it runs again every 1.5 s until the attempt is final. */
export const txCheckJobSchema = z.object({
  type: z.literal("tx_check"),
  projectId: z.string().min(1).max(200),
  key: z.string().min(1).max(600),
  attemptId: z.string().min(1).max(200),
});

/** The sweep of every attempt not yet final; it runs again every 30 s. */
export const txSweepJobSchema = z.object({ type: z.literal("tx_sweep") });

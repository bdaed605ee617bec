/**
 * The handlers of the transaction job kinds (`job_payloads.ts`): confirmation, the sweep and a
 * shared failure's release from the hourly windows.
 */
import { runTxConfirmJob } from "./follow/confirm_job.ts";
import { runTxSweepJob } from "./follow/sweep.ts";
import { runTxReleaseJob } from "./record/usage_release.ts";

/** Handlers of `tx_confirm`, `tx_sweep` and `tx_release`. */
export const txJobHandlers = {
  tx_confirm: runTxConfirmJob,
  tx_sweep: runTxSweepJob,
  tx_release: runTxReleaseJob,
};

/**
 * The handlers of the transaction job kinds (`job_payloads.ts`): confirmation, the sweep and a
 * shared failure's release from the hourly windows.
 */
import { runTxConfirmJob } from "./confirm_job.ts";
import { runTxSweepJob } from "./sweep.ts";
import { runTxReleaseJob } from "./usage_release.ts";

/** Handlers of `tx_confirm`, `tx_sweep` and `tx_release`. */
export const txJobHandlers = {
  tx_confirm: runTxConfirmJob,
  tx_sweep: runTxSweepJob,
  tx_release: runTxReleaseJob,
};

/** The handlers of the transaction job kinds (`job_payloads.ts`): confirmation and the sweep. */
import { runTxConfirmJob } from "./confirm_job.ts";
import { runTxSweepJob } from "./sweep.ts";

/** Handlers of `tx_confirm` and `tx_sweep`. */
export const txJobHandlers = { tx_confirm: runTxConfirmJob, tx_sweep: runTxSweepJob };

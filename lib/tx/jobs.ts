/** The handlers of the transaction job kinds (`job_payloads.ts`): the check and the sweep. */
import { runTxCheckJob } from "./confirm_job.ts";
import { runTxSweepJob } from "./sweep.ts";

/** Handlers of `tx_check` and `tx_sweep`. */
export const txJobHandlers = { tx_check: runTxCheckJob, tx_sweep: runTxSweepJob };

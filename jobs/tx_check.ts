/** Job handler: the background confirmation check of one transaction attempt. */
import { runTxCheck } from "../lib/tx/background.ts";
import type { JobOutcome, JobRun } from "./types.ts";
import type { JobPayloadOf } from "./payloads.ts";

/** Checks the attempt once; runs again in 1.5 s until it is confirmed or failed. */
export async function runTxCheckJob(run: JobRun<JobPayloadOf<"tx_check">>): Promise<JobOutcome> {
  const { projectId, key, attemptId } = run.payload;
  Object.assign(run.logFields, { projectId, idempotencyKey: key });
  const verdict = await runTxCheck(run.ctx, { projectId, key, attemptId }, run.id);
  // "continue" keeps the same job id (the attempt's record points at it) and resets attempts.
  return verdict.kind === "done" ? { kind: "done" } : { kind: "continue", at: verdict.at };
}

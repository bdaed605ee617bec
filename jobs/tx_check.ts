/** Job handler: the background confirmation check of one transaction attempt. */
import { runTxCheck } from "../lib/tx/check_job.ts";
import type { JobOutcome, JobRun } from "../lib/job_handler.ts";
import type { JobPayloadOf } from "./payloads.ts";

/** Checks the attempt once; runs again 1.5 s after this run started until it is confirmed or failed. */
export async function runTxCheckJob(run: JobRun<JobPayloadOf<"tx_check">>): Promise<JobOutcome> {
  const { projectId, key, attemptId } = run.payload;
  Object.assign(run.logFields, { projectId, idempotencyKey: key });
  const { ctx } = run;
  const verdict = await runTxCheck(ctx, { projectId, key, attemptId }, run.id);
  if (verdict.kind === "done") return { kind: "done" };
  // "continue" keeps the same job id (the attempt's record points at it) and resets attempts.
  return {
    kind: "continue",
    at: verdict.at,
    afterCommit: () => ctx.jobWaker.wakeIn(verdict.at - ctx.clock.now()),
  };
}

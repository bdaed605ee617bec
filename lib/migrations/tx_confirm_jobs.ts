/**
 * The confirmation path's job kind was `tx_check` before it was named for confirming; such jobs
 * become `tx_confirm` jobs with the same id (so the request's `checkJobId` still names its job),
 * each in a commit checked on the job's record. Every pending job has an entry in its lane's due
 * index, so the `tx` lane's index finds them all. Instances of the previous version queue such
 * jobs until the last of them stops, so this also runs in the minute sweep. Meanwhile an instance
 * that claims a job of the other version's kind drops it as a kind it does not know, and the 30 s
 * transaction sweep (of either version) gives the attempt a new job: the job only follows the
 * attempt to its status, so no payment depends on it.
 */
import { getJobEntry, jobKey, type JobRecord } from "../../kv/jobs.ts";
import { listLaneDueJobs } from "../../kv/job_queue.ts";
import type { MigrationStep } from "./step.ts";

/** Renames every queued `tx_check` job to `tx_confirm`. */
export const renameTxCheckJobs: MigrationStep = async ({ kv }) => {
  let changed = 0;
  for await (const due of listLaneDueJobs(kv, "tx")) {
    const job = await getJobEntry(kv, due.id);
    if (job.value?.payload.type !== "tx_check") continue;
    const record: JobRecord = {
      ...job.value,
      payload: { ...job.value.payload, type: "tx_confirm" },
    };
    if ((await kv.atomic().check(job).set(jobKey(record.id), record).commit()).ok) changed++;
  }
  return { changed, complete: true };
};

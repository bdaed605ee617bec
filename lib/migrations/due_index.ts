/**
 * Jobs queued by earlier versions wait in due indexes the worker no longer reads,
 * `["jobs_due", runAt, id]` (before lanes) and `["job_queue", lane, runAt, id]` (lanes without
 * per-project queues). Each of their entries is moved into the current index (`kv/job_queue.ts`)
 * in one commit checked against the entry and the job's record, so instances running this
 * together move each job once, and an entry whose job has moved on or finished is dropped.
 */
import { addDueEntry } from "../../kv/job_queue.ts";
import { dueJobOf, getJobEntry, type JobLane, type JobRecord } from "../../kv/jobs.ts";
import { laneOfOldJob } from "./job_lanes.ts";
import type { MigrationStep } from "./step.ts";

// The old indexes, and where the job id and its runAt sit in their keys.
const OLD_INDEXES = [
  { prefix: ["jobs_due"], runAt: 1, id: 2 },
  { prefix: ["job_queue"], runAt: 2, id: 3 },
] as const;

/** Moves the entries of the due indexes of earlier versions into the current one. */
export const moveOldDueEntries: MigrationStep = async ({ kv }) => {
  let changed = 0;
  for (const index of OLD_INDEXES) {
    for await (const entry of kv.list({ prefix: [...index.prefix] })) {
      const job = await getJobEntry(kv, entry.key[index.id] as string);
      const op = kv.atomic().check(entry, job).delete(entry.key);
      const record = job.value as (JobRecord & { lane?: JobLane }) | null;
      const live = record?.status === "pending" && record.runAt === entry.key[index.runAt];
      if (live) addDueEntry(op, laneOfOldJob(record), dueJobOf(record));
      if ((await op.commit()).ok && live) changed++;
    }
  }
  return { changed, complete: true };
};

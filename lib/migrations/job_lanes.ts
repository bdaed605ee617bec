/**
 * Job records stored before a record named its lane get the lane their kind had then, in a commit
 * checked on the record; the due entry does not move (its lane was that one already). A finished
 * record keeps the rest of its 7 days.
 */
import { DONE_JOB_TTL_MS, jobKey, type JobLane, type JobRecord } from "../../kv/jobs.ts";
import type { MigrationStep } from "./step.ts";

// The lane each kind had before records named it; every other kind waited with the events.
const LANE_BEFORE_RECORDS_NAMED_IT: Record<string, JobLane> = {
  tx_check: "tx",
  tx_sweep: "tx",
  watch_poll: "watch",
};

/** A job record of any earlier version. */
type OldJobRecord = Omit<JobRecord, "lane"> & { lane?: JobLane };

/** The lane a job of an earlier version waits in. */
export function laneOfOldJob(job: OldJobRecord): JobLane {
  return job.lane ?? LANE_BEFORE_RECORDS_NAMED_IT[job.payload.type] ?? "events";
}

/** Writes its lane into every job record that lacks one. */
export const nameJobLanes: MigrationStep = async ({ kv, clock }) => {
  let changed = 0;
  for await (const entry of kv.list<OldJobRecord>({ prefix: ["jobs"] })) {
    if (entry.value.lane !== undefined) continue;
    const record: JobRecord = { ...entry.value, lane: laneOfOldJob(entry.value) };
    const op = kv.atomic().check(entry);
    if (record.status === "pending") op.set(jobKey(record.id), record);
    else {
      const left = (record.doneAt ?? 0) + DONE_JOB_TTL_MS - clock.now();
      if (left > 0) op.set(jobKey(record.id), record, { expireIn: left });
      else op.delete(jobKey(record.id));
    }
    if ((await op.commit()).ok) changed++;
  }
  return { changed, complete: true };
};

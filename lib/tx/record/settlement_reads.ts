/**
 * What a settlement reads besides the keys' records: the attempt's confirmation job (removed by
 * it when no worker runs it), and the feed counter and webhook endpoints its `tx` events are
 * recorded with (`commitWithEvents`). A route reads them while its transaction confirms
 * (`readForSettlement`), so its settlement's first round reads nothing after the confirmation; a
 * later round, or the background's settlement, reads them itself.
 */
import type { TxContext } from "../runtime.ts";
import { eventSeqKey } from "../../../kv/event_feed.ts";
import { webhookTargetsKey } from "../../../kv/webhooks.ts";
import { addJobRemoval, getJobEntry, jobKey, type JobRecord } from "../../../kv/jobs.ts";
import type { TxRequestRecord } from "../../../kv/tx_requests.ts";

/** A settlement's other records, read ahead by its route. */
export interface SettlementReads {
  /** The confirmation job of the route's single attempt (a shared transaction's are left). */
  job: Deno.KvEntryMaybe<JobRecord> | null;
  /** The feed counter and webhook endpoints, as `commitWithEvents` takes them. */
  feed: { seq: Deno.KvEntryMaybe<number>; hooks: Deno.KvEntryMaybe<string[]> };
}

/** Reads, in one round trip, what the settlement of the route's attempts (`entries`) reads. */
export async function readForSettlement(
  ctx: TxContext,
  entries: readonly Deno.KvEntry<TxRequestRecord>[],
): Promise<SettlementReads> {
  const first = entries[0]!.value;
  const jobId = entries.length === 1 ? first.checkJobId : null;
  const [seq, hooks, job] = await ctx.kv.getMany([
    eventSeqKey(first.projectId),
    webhookTargetsKey(first.projectId),
    ...(jobId ? [jobKey(jobId)] : []),
  ]);
  return {
    job: (job ?? null) as Deno.KvEntryMaybe<JobRecord> | null,
    feed: { seq: seq as Deno.KvEntryMaybe<number>, hooks: hooks as Deno.KvEntryMaybe<string[]> },
  };
}

/**
 * The feed counter and endpoints read ahead, unless this instance has recorded events of the
 * project past that counter since (its commit would fail on it): then the settlement reads them.
 */
export function feedReadsOf(
  ctx: TxContext,
  projectId: string,
  reads: SettlementReads | undefined,
): SettlementReads["feed"] | undefined {
  if (!reads) return undefined;
  return (reads.feed.seq.value ?? 0) >= ctx.events.heads.peek(projectId) ? reads.feed : undefined;
}

/**
 * Adds, to `op`, the removal of the attempt's confirmation job (`known`: as read ahead) when no
 * worker is running it, so a request settled by the route leaves no job behind (a running one
 * finds the attempt final and stops).
 */
export async function addConfirmJobRemoval(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  record: TxRequestRecord,
  known: Deno.KvEntryMaybe<JobRecord> | null,
): Promise<void> {
  if (!record.checkJobId) return;
  const job = known?.key[1] === record.checkJobId
    ? known
    : await getJobEntry(ctx.kv, record.checkJobId);
  if (!job.value || job.value.status !== "pending" || job.value.lease !== null) return;
  op.check(job);
  addJobRemoval(op, job as Deno.KvEntry<JobRecord>);
}

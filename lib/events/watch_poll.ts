/** The `watch_poll` job: one poll of a watched address, rescheduling itself every 5 seconds. */
import type { Address, Signature } from "@solana/kit";
import { getProject } from "../../kv/projects.ts";
import { getWatchEntry, type Watch, watchKey, type WatchPosition } from "../../kv/watches.ts";
import type { JobPayloadOf } from "../../jobs/payloads.ts";
import type { JobOutcome, JobRun } from "../../jobs/types.ts";
import type { RpcClients } from "../chain/rpc_clients.ts";
import { log } from "../log.ts";
import { commitWithEvents } from "./record.ts";
import type { ServiceEvent } from "./types.ts";

/** Time from the end of one poll of a watch to the start of the next. */
export const WATCH_POLL_INTERVAL_MS = 5_000;
/** Most new transactions one poll sends; older ones beyond it are skipped. */
export const WATCH_POLL_MAX_TRANSACTIONS = 1_000;
// One RPC call must end well within the job lease (30 s).
const RPC_TIMEOUT_MS = 10_000;
const MAX_COMMIT_ROUNDS = 100;

/** A transaction found by a poll, newest first as the RPC lists them. */
interface FoundSignature {
  signature: string;
  slot: number;
  failed: boolean;
}

/** Reads the new history of a watch since its position (newest first, at most 1,000). */
async function fetchNewSignatures(
  rpc: RpcClients[keyof RpcClients],
  watch: Watch,
): Promise<FoundSignature[]> {
  const first = watch.position === null;
  const until = watch.position?.signature ?? undefined;
  const found = await rpc.getSignaturesForAddress(watch.address as Address, {
    commitment: "confirmed",
    limit: first ? 1 : WATCH_POLL_MAX_TRANSACTIONS,
    ...(until ? { until: until as Signature } : {}),
  }).send({ abortSignal: AbortSignal.timeout(RPC_TIMEOUT_MS) });
  return found.map((s) => ({
    signature: s.signature,
    slot: Number(s.slot),
    failed: s.err !== null,
  }));
}

/** Polls one watch: records the new position and one `watch` event per new transaction, in one commit. */
export async function runWatchPoll(run: JobRun<JobPayloadOf<"watch_poll">>): Promise<JobOutcome> {
  const { ctx, payload } = run;
  const { projectId, watchId } = payload;
  const entry = await getWatchEntry(ctx.kv, projectId, watchId);
  if (!entry.value) return { kind: "drop", reason: "The watch was removed" };
  const project = await getProject(ctx.kv, projectId);
  if (!project || project.deletedAt !== null) {
    return { kind: "drop", reason: "The project was deleted" };
  }
  const watch = entry.value;
  const fields = { ...run.logFields, watch: watch.name };

  let found: FoundSignature[];
  try {
    found = await fetchNewSignatures(ctx.rpc[project.cluster], watch);
  } catch (error) {
    // The position is untouched, so the next poll starts again from the same place.
    log("warn", "Watch poll failed; will poll again", { ...fields, error });
    return { kind: "continue", at: ctx.clock.now() + WATCH_POLL_INTERVAL_MS };
  }

  const first = watch.position === null;
  let position: WatchPosition | null = watch.position;
  if (found.length > 0) position = { signature: found[0].signature, slot: found[0].slot };
  else if (first) position = { signature: null, slot: null };
  const now = ctx.clock.now();
  const next: Watch = { ...watch, position, polledAt: now, polls: watch.polls + 1 };

  // The first poll only marks where the history ends. With events off the position still moves
  // and the events still go to the feed, so turning events on later replays nothing.
  const events: ServiceEvent[] = first ? [] : found.toReversed().map((s) => ({
    type: "watch",
    name: watch.name,
    address: watch.address,
    signature: s.signature,
    slot: s.slot,
    failed: s.failed,
  }));
  // The new position, the events and their deliveries land in one commit checked on the watch, so
  // each found transaction is recorded exactly once. It is retried on its own (not with the job's
  // commit): other watches and links of the project take feed ids too, and losing that race must
  // cost a retry of this commit, not another poll.
  let publishing = false;
  for (let round = 0;; round++) {
    const op = ctx.kv.atomic().check(entry).set(watchKey(projectId, watchId), next);
    const committed = await commitWithEvents(ctx, op, { projectId, events });
    if (committed.ok) {
      publishing = committed.delivering;
      break;
    }
    const current = await getWatchEntry(ctx.kv, projectId, watchId);
    if (current.versionstamp !== entry.versionstamp) {
      // Another run polled this watch meanwhile: its commit recorded these transactions.
      return { kind: "continue", at: now + WATCH_POLL_INTERVAL_MS };
    }
    if (round === MAX_COMMIT_ROUNDS) throw new Error("Cannot record the poll: too many conflicts");
  }
  if (events.length > 0) {
    log("info", "Watch found new transactions", { ...fields, count: events.length, publishing });
  }
  return { kind: "continue", at: now + WATCH_POLL_INTERVAL_MS };
}

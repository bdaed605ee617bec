/**
 * The `watch_poll` job: one poll of a watched address, rescheduling itself every 5 seconds.
 *
 * One developer account cannot flood the event lane: all the watches of all the projects it owns
 * (a handed-over project counts against its new owner's, `getProjectOwner`) together record at most
 * `WATCH_EVENTS_PER_DEVELOPER_PER_MINUTE` events per clock minute
 * (`takeWatchEventRoom`; the newest are kept when a poll finds more, as rule 3 keeps the newest
 * 1,000), so free projects do not multiply what one account puts in the lanes; and beyond the
 * first `WATCH_EVENT_BURST` of a minute its events are spread at the cap's pace (60 ms apart).
 */
import type { Address, Signature } from "@solana/kit";
import { getProject } from "../../kv/projects.ts";
import { getProjectOwner } from "../../kv/members.ts";
import {
  getWatchEntry,
  listAllWatches,
  takeWatchEventRoom,
  type Watch,
  watchKey,
  watchPollJobId,
  type WatchPosition,
} from "../../kv/watches.ts";
import { ensureLoopJob } from "../../kv/jobs.ts";
import type { Clock } from "../../core/clock.ts";
import { addWatchPoll, type WatchPollJob } from "./job_payloads.ts";
import type { JobOutcome, JobRun } from "../job_handler.ts";
import type { EventContext } from "../events/runtime.ts";
import type { RpcClients } from "../chain/rpc_clients.ts";
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { log } from "../../core/log.ts";
import { commitWithEvents } from "../events/record.ts";
import type { ServiceEvent } from "../../core/events.ts";

/** Time from the end of one poll of a watch to the start of the next. */
export const WATCH_POLL_INTERVAL_MS = 5_000;
/** Most new transactions one poll sends; older ones beyond it are skipped. */
const WATCH_POLL_MAX_TRANSACTIONS = 1_000;
/** Most watch events the projects one developer owns queue per clock minute, all their watches together. */
const WATCH_EVENTS_PER_DEVELOPER_PER_MINUTE = 1_000;
/** Watch events of a developer per minute queued due at once; later ones are spread at the cap's pace. */
const WATCH_EVENT_BURST = 100;
const MINUTE_MS = 60_000;
const WATCH_EVENT_SPACING_MS = MINUTE_MS / WATCH_EVENTS_PER_DEVELOPER_PER_MINUTE;
// One RPC call must end well within the job lease (30 s).
const RPC_TIMEOUT_MS = 10_000;

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
export async function runWatchPoll(run: JobRun<WatchPollJob, EventContext>): Promise<JobOutcome> {
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
  const [newest] = found;
  if (newest) position = { signature: newest.signature, slot: newest.slot };
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
  // Beyond the owner's per-minute cap the oldest are skipped, as rule 3 skips beyond 1,000: a
  // skipped transaction is neither in the feed nor published.
  const minute = Math.floor(now / MINUTE_MS);
  const { before: used, taken } = events.length === 0
    ? { before: 0, taken: 0 }
    : await takeWatchEventRoom(ctx.kv, await getProjectOwner(ctx.kv, project), {
      now,
      wanted: events.length,
      max: WATCH_EVENTS_PER_DEVELOPER_PER_MINUTE,
    });
  const kept = events.slice(events.length - taken);
  // The n-th event of the minute is due at its place in the minute at the cap's pace.
  const dueAt = (i: number) =>
    Math.max(now, minute * MINUTE_MS + (used + i - WATCH_EVENT_BURST) * WATCH_EVENT_SPACING_MS);
  // The new position, the events and their deliveries land in one commit checked on the watch, so
  // each found transaction is recorded exactly once. It is retried on its own (not with the job's
  // commit): other watches and links of the project take feed ids too, and losing that race must
  // cost a retry of this commit, not another poll.
  const recorded = await commitWithRetry("record the poll", async () => {
    const op = ctx.kv.atomic().check(entry).set(watchKey(projectId, watchId), next);
    const committed = await commitWithEvents(ctx, op, { projectId, events: kept, dueAt });
    if (committed.ok) return { publishing: committed.delivering };
    const current = await getWatchEntry(ctx.kv, projectId, watchId);
    // Another run polled this watch meanwhile: its commit recorded these transactions.
    return current.versionstamp === entry.versionstamp ? RETRY : null;
  });
  if (!recorded) return { kind: "continue", at: now + WATCH_POLL_INTERVAL_MS };
  const { publishing } = recorded;
  if (events.length > 0) {
    log("info", "Watch found new transactions", { ...fields, count: events.length, publishing });
  }
  if (kept.length < events.length) {
    log("warn", "Watch events over the developer's per-minute limit skipped", {
      ...fields,
      skipped: events.length - kept.length,
      limit: WATCH_EVENTS_PER_DEVELOPER_PER_MINUTE,
    });
  }
  return { kind: "continue", at: now + WATCH_POLL_INTERVAL_MS };
}

/**
 * Restarts the poll loop of every watch (of a live project) whose poll job is gone, for the minute
 * cron's sweep; returns how many it restarted.
 */
export async function restartLostWatchPolls(
  ctx: { kv: Deno.Kv; clock: Clock },
): Promise<number> {
  let restarted = 0;
  const live = new Map<string, boolean>();
  for await (const watch of listAllWatches(ctx.kv)) {
    if (!live.has(watch.projectId)) {
      const project = await getProject(ctx.kv, watch.projectId);
      live.set(watch.projectId, Boolean(project && project.deletedAt === null));
    }
    if (!live.get(watch.projectId)) continue;
    const id = watchPollJobId(watch.projectId, watch.id);
    const started = await ensureLoopJob(ctx.kv, id, (op) => {
      addWatchPoll(op, watch, ctx.clock.now());
    });
    if (started === true) {
      restarted++;
      log("warn", "Watch poll loop restarted", { projectId: watch.projectId, watch: watch.name });
    }
  }
  return restarted;
}

/**
 * The lifecycle's final events (`lifecycle.ts` states them): confirm, abandon, fail, and a failed
 * key found landed. Each is one checked commit on the request record (on every record of a shared
 * transaction: its keys move together), so whichever of the route, the confirmation job or the
 * sweep gets there first decides, and a final status, its `tx` event (in the feed, or as a pending
 * event moved into the feed just after: `lib/events/pending.ts`) and the release of a failed
 * attempt's usage land together: exactly one event per attempt, and failed attempts never count
 * against the limits. A reward's payment moves its reward in the same commit
 * (`reward_settlement.ts`). A failed key found landed is `found_landed.ts`.
 */
import { commitWithRetry, RETRY } from "../../../core/commit_retry.ts";
import { abortable } from "../../../core/deadline.ts";
import type { TxContext } from "../runtime.ts";
import { log } from "../../../core/log.ts";
import { commitWithEvents } from "../../events/record.ts";
import { countSettlement, movePendingEvents, whenFeedIsQuiet } from "../../events/pending.ts";
import { addPendingEvents } from "../../../kv/event_pending.ts";
import type { ServiceEvent } from "../../../core/events.ts";
import {
  addTxStatusMove,
  getTxRequestEntry,
  txAttemptByTimeKey,
  txRequestKey,
  type TxRequestRecord,
  txUnsettledKey,
} from "../../../kv/tx_requests.ts";
import { ABANDONED_ERROR } from "../lifecycle/result.ts";
import { type AttemptEvent, isFinal, transitionOf } from "../lifecycle/lifecycle.ts";
import { applyEvent } from "../lifecycle/apply_event.ts";
import { addRewardSettlement, type RewardSettlement } from "./reward_settlement.ts";
import { addSettledUsage } from "./usage_release.ts";
import { addConfirmJobRemoval, feedReadsOf, type SettlementReads } from "./settlement_reads.ts";

/** Which attempt a change is for; a change for an older attempt of the key is ignored. */
export interface AttemptRef {
  projectId: string;
  key: string;
  attemptId: string;
}

/**
 * A final status. `refused` marks a failure proven by the refusal of the first send in preflight
 * (the node did not forward it), so a retry of the key needs no further proof.
 */
export type FinalOutcome =
  | { status: "confirmed" }
  | { status: "failed"; error: string; refused?: boolean };

/** The ref of a stored attempt. */
export function attemptRef(record: TxRequestRecord): AttemptRef {
  return { projectId: record.projectId, key: record.key, attemptId: record.attemptId };
}

/** Options of `settleAttempt`. */
interface SettleOptions {
  /**
   * Must hold for every record the commit is checked against (each key of a shared transaction
   * still open), or nothing changes.
   */
  onlyIf?: (record: TxRequestRecord) => boolean;
  /**
   * A route's deadline: once it aborts the settlement stops waiting for its turn (among the
   * project's failed ones, and at its event feed) and rejects with its reason, nothing written
   * (the background settles it later).
   */
  signal?: AbortSignal | undefined;
  /**
   * The records as this path last wrote them, the attempt's and those of every key sharing its
   * transaction: the first round commits against them without a read.
   */
  known?: Deno.KvEntry<TxRequestRecord>[] | undefined;
  /** Its other records, read by the route while its transaction confirmed: for the first round. */
  reads?: Promise<SettlementReads> | undefined;
}

/**
 * Moves a pending or submitted attempt to its final status, with its `tx` event (none for an
 * abandoned one) and, when failed, the release of its usage; the keys of a shared transaction
 * move with it (`settleTransaction`). Returns the record as it stands afterwards (already final
 * when another path settled it first), or null when the key is unknown.
 */
export async function settleAttempt(
  ctx: TxContext,
  ref: AttemptRef,
  outcome: FinalOutcome,
  options: SettleOptions = {},
): Promise<TxRequestRecord | null> {
  return (await settleTransaction(ctx, ref, outcome, options)).get(ref.key) ?? null;
}

/**
 * Settles an attempt and every other key its signed transaction pays (the items of a batch
 * sharing it, `SignedTx.sharedKeys`) in one commit checked against each of them: they share its
 * fate, so no store failure can leave one `failed` while another still follows the same bytes
 * (its confirmation would send them again, paying the failed one too). The commit checks each
 * key still open and, when it records their `tx` events in the feed, the feed counter and webhook
 * endpoints (`commitWithEvents`): at most 10, as `maxSharedPayments` allows; so it leaves the keys'
 * confirmation jobs to end on their next round (each finds its attempt final) and a failed key's
 * hourly windows to a `tx_release` job (`usage_release.ts`). A reward's payment, never shared, also
 * checks its reward and the player's holds (`reward_settlement.ts`). It records the events in the
 * feed only as the project's one settlement in flight on a quiet feed; otherwise, or once it lost
 * its first round, in the project's pending events, moved into the feed before it returns
 * (`pending.ts` of `lib/events/`). A key already settled or retried (by versions that settled keys
 * one by one) is left as it is. Returns the keys' records as they stand afterwards.
 */
export async function settleTransaction(
  ctx: TxContext,
  ref: AttemptRef,
  outcome: FinalOutcome,
  options: SettleOptions = {},
): Promise<Map<string, TxRequestRecord>> {
  return await countSettlement(ctx, ref.projectId, async () => {
    const pending = { recorded: false };
    const found = outcome.status !== "failed"
      ? await settle(ctx, ref, outcome, { ...options, pending })
      : await ctx.tx.failedSettlements.run(
        ref.projectId,
        () => settle(ctx, ref, outcome, { ...options, pending }),
        { signal: options.signal },
      );
    if (pending.recorded) {
      // Settled already: a route at its deadline answers, and the move runs on (or the sweep's).
      const moving = movePendingEvents(ctx, ref.projectId);
      await (options.signal ? abortable(moving, options.signal).catch(() => {}) : moving);
    }
    return found;
  });
}

// Settles in one checked commit; sets `pending.recorded` when that commit wrote pending events.
async function settle(
  ctx: TxContext,
  ref: AttemptRef,
  outcome: FinalOutcome,
  options: SettleOptions & { pending: { recorded: boolean } },
): Promise<Map<string, TxRequestRecord>> {
  return await commitWithRetry("settle the transaction request", async (round) => {
    options.signal?.throwIfAborted();
    const entries = round === 0 && options.known ? options.known : await readTransaction(ctx, ref);
    const reads = round === 0 ? await options.reads?.catch(() => undefined) : undefined;
    const found = new Map(entries.flatMap(({ value }) => value ? [[value.key, value]] : []));
    const record = found.get(ref.key);
    if (!record || record.attemptId !== ref.attemptId) return found;
    const event = eventOf(outcome);
    const transition = transitionOf(record, event);
    if (!transition) return found;
    const open = entries.filter((entry): entry is Deno.KvEntry<TxRequestRecord> =>
      entry.value !== null && !isFinal(entry.value) && entry.value.signature === record.signature
    );
    // Re-checked on every read, inside the same checked commit: e.g. "still unsigned".
    if (options.onlyIf && !open.every((entry) => options.onlyIf!(entry.value))) return found;
    const now = ctx.clock.now();
    const shared = record.signed?.sharedKeys !== undefined;
    const op = ctx.kv.atomic();
    const settled: TxRequestRecord[] = [];
    const rewards: RewardSettlement[] = [];
    const events: ServiceEvent[] = [];
    for (const entry of open) {
      const next = applyEvent(entry.value, event, now);
      if (!next) continue;
      settled.push(await addSettlement(ctx, op, entry, next, { now, shared, job: reads?.job }));
      if (transition.event) events.push(txEventOf(next, outcome.status));
      const reward = await addRewardSettlement(ctx, op, next, now);
      if (!reward) continue;
      rewards.push(reward);
      events.push(...reward.events);
    }
    // A quiet feed takes the events at once; a busy one, or a lost first round, the pending area.
    const direct = round === 0 && events.length > 0
      ? await whenFeedIsQuiet(
        ctx,
        ref.projectId,
        () =>
          commitWithEvents(ctx, op, {
            projectId: ref.projectId,
            events,
            signal: options.signal,
            reads: feedReadsOf(ctx, ref.projectId, reads),
          }),
      )
      : null;
    if (direct && !direct.ok) return RETRY;
    if (!direct) {
      if (events.length > 0) addPendingEvents(op, ref.projectId, { events, now });
      if (!(await op.commit()).ok) return RETRY;
      options.pending.recorded = events.length > 0;
    }
    for (const [i, next] of settled.entries()) {
      found.set(next.key, next);
      log(outcome.status === "confirmed" ? "info" : "warn", "Transaction request settled", {
        projectId: ref.projectId,
        idempotencyKey: next.key,
        attempt: next.attempt,
        status: outcome.status,
        signature: open[i]!.value.signature,
        error: next.error,
      });
    }
    for (const reward of rewards) reward.logMove();
    return found;
  });
}

/**
 * The entries of the attempt's key and, when its signed transaction pays other keys too, theirs.
 */
async function readTransaction(
  ctx: TxContext,
  ref: AttemptRef,
): Promise<Deno.KvEntryMaybe<TxRequestRecord>[]> {
  const entry = await getTxRequestEntry(ctx.kv, ref.projectId, ref.key);
  const record = entry.value;
  const keys = record?.attemptId === ref.attemptId ? record.signed?.sharedKeys ?? [] : [];
  const others = keys.filter((key) => key !== ref.key);
  if (others.length === 0) return [entry];
  const siblings = await ctx.kv.getMany<TxRequestRecord[]>(
    others.map((key) => txRequestKey(ref.projectId, key)),
  );
  return [entry, ...siblings];
}

/** The lifecycle's event of a final outcome. */
function eventOf(outcome: FinalOutcome): AttemptEvent {
  if (outcome.status === "confirmed") return { type: "confirm" };
  if (outcome.error === ABANDONED_ERROR) return { type: "abandon" };
  return { type: "fail", error: outcome.error, ...(outcome.refused ? { refused: true } : {}) };
}

/**
 * Adds, to `op`, one open attempt's move to its final status `next`, checked on its record, and
 * returns `next`. `shared`: settled with the other keys of its transaction.
 */
async function addSettlement(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  entry: Deno.KvEntry<TxRequestRecord>,
  next: TxRequestRecord,
  options: { now: number; shared: boolean; job: SettlementReads["job"] | undefined },
): Promise<TxRequestRecord> {
  const { now } = options;
  const record = entry.value;
  // A key that failed without its attempt leaving the node paid nothing and can pay nothing
  // later: it is kept a bounded time, with its index entries.
  const kept = neverLeft(next) ? { expireIn: UNSENT_FAILED_KEPT_MS } : {};
  if (kept.expireIn) next.expiresAt = now + kept.expireIn;
  op.check(entry).set(entry.key, next, kept).delete(txUnsettledKey(record.projectId, record.key));
  if (kept.expireIn) op.set(txAttemptByTimeKey(record.projectId, next.attemptId), next.key, kept);
  addTxStatusMove(op, record, next, kept);
  await addSettledUsage(ctx, op, next, options);
  if (!options.shared) await addConfirmJobRemoval(ctx, op, record, options.job ?? null);
  return next;
}

/** How long a key whose latest attempt failed without leaving the node is kept: 30 days. */
export const UNSENT_FAILED_KEPT_MS = 30 * 24 * 60 * 60 * 1000;

// Failed, and nothing of this attempt can ever land: never signed, or refused in preflight on its
// first send (the node did not forward it, and every key holding the bytes settles in this commit).
// Earlier attempts were proven dead when they gave way.
function neverLeft(record: TxRequestRecord): boolean {
  return record.status === "failed" && (!record.signed || record.signed.refused === true);
}

/** The `tx` event of an attempt settled as `next`. */
export function txEventOf(next: TxRequestRecord, status: FinalOutcome["status"]): ServiceEvent {
  return {
    type: "tx",
    key: next.key,
    kind: next.kind,
    status,
    signature: next.signature,
    userId: next.recipientUserId,
    error: next.error,
  };
}

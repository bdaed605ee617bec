/**
 * A project's publisher: the one sender of its events while it packs them or caps its messages a
 * minute (`publishesThroughPublisher`, `settings.ts`; both extensions of the spec, off by default).
 * The feed is the outbox: the commit recording an event marks its feed entry `outbox` instead of
 * queueing a delivery job (`record.ts`), and one loop job per project (`publish_events`,
 * `publisher_loop.ts` starts it) reads the marked events after its cursor and publishes them.
 *
 * | Step of a run | What it does                                                                    |
 * | ------------- | ------------------------------------------------------------------------------- |
 * | retries       | sends again each waiting message whose retry is due                             |
 * | new messages  | packs (`pack.ts`) the marked events after the cursor into at most 10 messages, |
 * |               | no more than the cap leaves in the last 60 seconds (`message_cap.ts`), sends them |
 * |               | or, packing, one notice for them when they would not cross in 5 s (`notice.ts`) |
 * | end           | one checked commit: cursor, waiting messages, sends, delivery log, next run     |
 *
 * The next run comes at once while events and room remain, when the cap frees a message, at the
 * next retry, or else in a second (5 s once idle for 30 s; a commit marking events pulls it forward,
 * `publisher_loop.ts`). Each message follows the spec's rules for an event: 4 attempts
 * 0.5, 1 and 2 s apart for network errors, timeouts, 429 and 5xx, any other answer dropping it; its
 * outcome is one delivery log entry per event it carried.
 *
 * One run at a time: the job's lease (a checked commit, renewed while the run lasts) is the claim
 * on the events after the cursor, and the commit ending the run is checked against the record it
 * read, so two instances never both publish the same events. Only a run whose instance dies between
 * publishing and that commit is repeated (at least once, as `jobs/README.md` states).
 *
 * A project that stops packing and capping keeps its publisher until the events it marked went out
 * and 30 s (three times the settings' cache) have passed; then the loop ends.
 */
import {
  addDelivery,
  addUnloggedDeliveries,
  type DeliveryOutcome,
  trimDeliveries,
} from "../../kv/deliveries.ts";
import { getEventSeqEntry, listFeedEvents } from "../../kv/event_feed.ts";
import {
  getPublisherEntry,
  newPublisherState,
  type PendingMessage,
  publisherKey,
} from "../../kv/event_publishers.ts";
import type { PublishEventsJob } from "./job_payloads.ts";
import type { JobOutcome, JobRun } from "../job_handler.ts";
import type { EventContext, PublishTarget } from "./runtime.ts";
import { log } from "../../core/log.ts";
import { must } from "../../core/must.ts";
import { packMessages } from "./pack.ts";
import { publishToTarget } from "./publish_to_target.ts";
import { answerStatus, isRetryable } from "./messaging_client.ts";
import { describeAnswer, MAX_DELIVERY_ATTEMPTS, RETRY_DELAYS_MS } from "./deliver.ts";
import { publishesThroughPublisher, publishTargetFor } from "./settings.ts";
import { addSends, capFreesAt, capRoom } from "./message_cap.ts";
import { makeNotice, needsNotice } from "./notice.ts";

/** Most messages one run sends (retries included), at once. */
const MESSAGES_PER_RUN = 10;
/** Most messages waiting for a retry; past it no new message is made until one ends. */
const MAX_PENDING = 50;
/** Events read from the feed per run: more than 10 full messages hold. */
const READ_LIMIT = 200;
/** Wait of an idle publisher before it looks at the feed again; 5 s once idle for 30 s. */
const IDLE_MS = 1_000;
const LONG_IDLE_MS = 5_000;
const LONG_IDLE_AFTER_MS = 30_000;
/** How long a publisher whose project stopped packing and capping lasts once caught up. */
const STOP_AFTER_MS = 30_000;

/** Runs one round of a project's publisher. */
export async function runPublishEvents(
  run: JobRun<PublishEventsJob, EventContext>,
): Promise<JobOutcome> {
  const { ctx, now } = run;
  const { projectId } = run.payload;
  const [entry, seq, target] = await Promise.all([
    getPublisherEntry(ctx.kv, projectId),
    getEventSeqEntry(ctx.kv, projectId),
    publishTargetFor(ctx, projectId),
  ]);
  const state = entry.value ?? newPublisherState(seq.value ?? 0);
  const head = seq.value ?? 0;
  const cap = target?.messagesPerMinute ?? null;
  const logged = { count: 0 };
  const logEvents = (
    message: PendingMessage,
    ended: {
      outcome: DeliveryOutcome;
      attempts: number;
      status: number | null;
      error: string | null;
    },
  ) => {
    const outcome = message.covers !== undefined && ended.outcome === "delivered"
      ? { ...ended, outcome: "notice" as const }
      : ended;
    for (const event of message.events) {
      addDelivery(run.op, projectId, { at: now, type: event.type, eventId: event.id, ...outcome });
    }
    const unlogged = (message.covers ?? message.events.length) - message.events.length;
    addUnloggedDeliveries(run.op, projectId, { ...outcome, at: now, count: unlogged });
    logged.count += message.events.length;
  };

  // Retries that are due, and new messages within the run's share and the cap.
  const due = state.pending.filter((message) => message.dueAt <= now);
  let pending = state.pending.filter((message) => message.dueAt > now);
  const room = Math.min(
    MESSAGES_PER_RUN - due.length,
    MAX_PENDING - pending.length - due.length,
    target ? capRoom(state.sent, { cap, now }) : Infinity,
  );
  let cursor = state.cursor;
  const fresh: PendingMessage[] = [];
  if (room > 0 && cursor < head) {
    const page = await listFeedEvents(ctx.kv, projectId, {
      after: cursor,
      limit: READ_LIMIT,
      types: null,
      now,
      maxDecoded: 1_000,
      outboxOnly: true,
    });
    const messages = packMessages(page.events, { pack: target?.pack ?? false });
    // The page holds every waiting event when it reached the head; else up to the head may wait.
    const notice = target?.pack === true && messages.length > 0 && needsNotice({
      waiting: page.next >= head ? page.events.length : head - cursor,
      perMessage: page.events.length / messages.length,
      sent: state.sent,
      cap,
      now,
    });
    if (notice) {
      const made = await makeNotice(ctx.kv, projectId, { after: cursor, now });
      fresh.push(made.message);
      cursor = made.cursor;
    } else {
      const taken = target ? messages.slice(0, room) : messages;
      cursor = taken.length < messages.length
        ? Number(must(taken.at(-1)?.events.at(-1), "the last event taken").id)
        : page.next;
      for (const message of taken) {
        const events = message.events.map(({ id, type }) => ({ id, type }));
        fresh.push({ message: message.message, events, attempts: 0, dueAt: now });
      }
    }
  }

  if (!target) {
    // Events were turned off (or the project deleted): nothing is sent, as with one job per event.
    const skipped = [...state.pending, ...fresh];
    if (skipped.length > 0) {
      const events = skipped.reduce((sum, m) => sum + (m.covers ?? m.events.length), 0);
      log("info", "Events not published: events are off", { ...run.logFields, events });
    }
    for (const message of skipped) {
      logEvents(message, {
        outcome: "skipped",
        attempts: message.attempts,
        status: null,
        error: "Events are off",
      });
    }
    pending = [];
  } else {
    const sending = [...due, ...fresh];
    const answers = await Promise.all(
      sending.map((message) =>
        publishToTarget(ctx, projectId, { target, message: message.message })
      ),
    );
    for (const [i, answer] of answers.entries()) {
      const message = must(sending[i], "a sent message");
      const attempts = message.attempts + 1;
      const ended = settle(answer, attempts);
      const fields = {
        ...run.logFields,
        events: message.covers ?? message.events.length,
        notice: message.covers !== undefined,
        // A notice lists only its newest events: its first is not known here.
        firstEventId: message.covers === undefined ? message.events[0]?.id : undefined,
        lastEventId: message.events.at(-1)?.id,
        attempt: attempts,
        status: answerStatus(answer),
      };
      if (ended === null) {
        const delay = must(RETRY_DELAYS_MS[attempts - 1], `retry delay after attempt ${attempts}`);
        pending.push({ ...message, attempts, dueAt: now + delay });
        log("warn", "Events publish failed; will retry", {
          ...fields,
          reason: describeAnswer(answer),
        });
        continue;
      }
      logEvents(message, { ...ended, attempts });
      if (ended.outcome === "delivered") log("info", "Events published", fields);
      else {log("error", "Events dropped", {
          ...fields,
          reason: ended.error,
          outcome: ended.outcome,
        });}
    }
  }

  const more = cursor < head;
  const sent = addSends(state.sent, { now, count: target ? fresh.length : 0 });
  const active = target !== null && publishesThroughPublisher(target);
  const offSince = active ? null : state.offSince ?? now;
  const busy = due.length + fresh.length > 0;
  const idleSince = busy || more || pending.length > 0 ? null : state.idleSince ?? now;
  run.op.check(entry).set(publisherKey(projectId), { cursor, pending, sent, offSince, idleSince });
  const afterCommit = logged.count > 0 ? () => trimDeliveries(ctx.kv, projectId) : undefined;
  if (offSince !== null && !more && pending.length === 0 && now - offSince >= STOP_AFTER_MS) {
    log("info", "Event publisher stopped: the project neither packs nor caps", run.logFields);
    return { kind: "done", afterCommit };
  }
  const idleMs = idleSince !== null && now - idleSince >= LONG_IDLE_AFTER_MS
    ? LONG_IDLE_MS
    : IDLE_MS;
  const at = nextRunAt({ target, sent, pending, more, now, idleMs });
  return { kind: "continue", at, afterCommit };
}

// How an attempt ended: null when it is to be tried again.
function settle(
  answer: Awaited<ReturnType<typeof publishToTarget>>,
  attempts: number,
): { outcome: DeliveryOutcome; status: number | null; error: string | null } | null {
  const status = answerStatus(answer);
  if (answer.kind === "accepted") return { outcome: "delivered", status, error: null };
  if (isRetryable(answer) && attempts < MAX_DELIVERY_ATTEMPTS) return null;
  const outcome = isRetryable(answer) ? "gave_up" : "rejected";
  return { outcome, status, error: describeAnswer(answer) };
}

// The next round: at once while events wait and the cap has room, else the earliest of the cap
// freeing a message, the next retry and the idle look.
function nextRunAt(input: {
  target: PublishTarget | null;
  sent: Array<[number, number]>;
  pending: PendingMessage[];
  more: boolean;
  now: number;
  idleMs: number;
}): number {
  const { target, sent, pending, more, now } = input;
  const times = [now + input.idleMs, ...pending.map((message) => message.dueAt)];
  if (more && pending.length < MAX_PENDING) {
    const cap = target?.messagesPerMinute ?? null;
    if (cap === null || capRoom(sent, { cap, now }) > 0) return now;
    times.push(capFreesAt(sent, { cap, now }));
  }
  return Math.min(...times);
}

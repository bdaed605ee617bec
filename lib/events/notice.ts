/**
 * Burst notices, part of the packing extension (`pack.ts`): when the events waiting after the
 * publisher's cursor would not cross the topic within 5 seconds under the project's cap on messages
 * a minute (a round end of 500 payouts needs about 125 packed messages; a topic carries about 80 a
 * minute at 1,000 servers, `message_cap.ts`), the publisher sends one message instead of them,
 * `{"v":1,"type":"events","through":"<feed id>"}`, and moves its cursor past them. The events stay
 * in the feed: a server told `through` reads the feed up to that id (the SDK through its universe
 * relay) and applies what it had not. Only packing projects get notices, as only they get `events`.
 *
 * A notice covers at most 2,000 events (more wait for the next round's choice); its delivery log
 * entries are those of the newest events the log keeps, the rest counted in usage only.
 */
import { DELIVERY_LOG_SIZE } from "../../kv/deliveries.ts";
import { listFeedEvents } from "../../kv/event_feed.ts";
import type { PendingMessage } from "../../kv/event_publishers.ts";
import { must } from "../../core/must.ts";
import { capRoom } from "./message_cap.ts";

/** How soon a backlog must cross the topic for it to go as messages rather than a notice. */
const HORIZON_MS = 5_000;
/** Most events one notice covers. */
const MAX_NOTICE_EVENTS = 2_000;

/**
 * True when `waiting` events, `perMessage` to a message, need more messages than the cap allows
 * over the next 5 seconds (its room then: the room now and what leaves the window meanwhile).
 */
export function needsNotice(input: {
  waiting: number;
  perMessage: number;
  sent: ReadonlyArray<[number, number]>;
  cap: number | null;
  now: number;
}): boolean {
  const { cap, now } = input;
  if (cap === null) return false;
  const allowed = capRoom(input.sent, { cap, now: now + HORIZON_MS });
  return Math.ceil(input.waiting / input.perMessage) > allowed;
}

/** The notice covering the marked events after `after`, and the cursor past them. */
export async function makeNotice(
  kv: Deno.Kv,
  projectId: string,
  options: { after: number; now: number },
): Promise<{ message: PendingMessage; cursor: number }> {
  const page = await listFeedEvents(kv, projectId, {
    after: options.after,
    limit: MAX_NOTICE_EVENTS,
    types: null,
    now: options.now,
    maxDecoded: MAX_NOTICE_EVENTS,
    outboxOnly: true,
  });
  const through = must(page.events.at(-1), "an event after the cursor").id;
  const events = page.events.slice(-DELIVERY_LOG_SIZE).map(({ id, type }) => ({ id, type }));
  return {
    message: {
      message: encodeNotice(through),
      events,
      covers: page.events.length,
      attempts: 0,
      dueAt: options.now,
    },
    cursor: page.next,
  };
}

/** The notice's message: `through` is the feed id of the last event it covers. */
export function encodeNotice(through: string): string {
  return JSON.stringify({ v: 1, type: "events", through });
}

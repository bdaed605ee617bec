/**
 * Packing events into messages, an extension of the spec that a project turns on ("Pack events",
 * off by default): several events in one message of at most 1,000 encoded bytes,
 * `{"v":1,"type":"events","events":[...]}`, each entry the event's own message object (`type`, feed
 * `id`, fields, null ones left out) without `v`. A consumer that follows the spec ignores the
 * unknown type, which is why it is opt-in.
 *
 * - Events keep feed order within a message (messages themselves may arrive in any order, as the
 *   spec says of events).
 * - A message that would carry one event is that event's own message, exactly as the spec sends it.
 * - Entries are encoded by `message.ts`, so the spec's size rule (a long `tx` error cut to 300
 *   characters) applies to each; one too big to share a message goes alone.
 */
import type { RecordedEvent } from "../../core/events.ts";
import { byteLength, encodeEventMessage, MAX_MESSAGE_BYTES } from "./message.ts";

/** One message to publish and the events it carries. */
export interface OutgoingMessage {
  message: string;
  events: RecordedEvent[];
}

const OPEN = '{"v":1,"type":"events","events":[';
const CLOSE = "]}";
// Every event message starts so (`message.ts` writes `v` first).
const VERSION_PREFIX = '{"v":1,';

/** The messages that carry `events`, in order: one each, or packed when `pack` is true. */
export function packMessages(
  events: readonly RecordedEvent[],
  options: { pack: boolean },
): OutgoingMessage[] {
  const messages: OutgoingMessage[] = [];
  let entries: string[] = [];
  let carried: RecordedEvent[] = [];
  let bytes = byteLength(OPEN) + byteLength(CLOSE) - 1;
  const flush = () => {
    if (carried.length === 0) return;
    const message = carried.length === 1
      ? encodeEventMessage(carried[0]!)
      : OPEN + entries.join(",") + CLOSE;
    messages.push({ message, events: carried });
    entries = [];
    carried = [];
    bytes = byteLength(OPEN) + byteLength(CLOSE) - 1;
  };
  for (const event of events) {
    if (!options.pack) {
      messages.push({ message: encodeEventMessage(event), events: [event] });
      continue;
    }
    const entry = "{" + encodeEventMessage(event).slice(VERSION_PREFIX.length);
    // Each entry adds its bytes and one comma (the first one's is the `- 1` above).
    const size = byteLength(entry) + 1;
    if (bytes + size > MAX_MESSAGE_BYTES) flush();
    entries.push(entry);
    carried.push(event);
    bytes += size;
  }
  flush();
  return messages;
}

/**
 * The wire form of an event: a JSON string with `v: 1`, `type` and the event's feed `id`, null
 * fields left out, within 1,000 bytes.
 */
import type { ServiceEvent } from "../../core/events.ts";

/** Message format version every event carries. */
const EVENT_VERSION = 1;
/** The messaging service refuses bigger messages; the encoded JSON is measured in UTF-8 bytes. */
export const MAX_MESSAGE_BYTES = 1_000;
/** What an over-long `tx` error is cut to, in characters. */
const TX_ERROR_CUT_CHARS = 300;

const encoder = new TextEncoder();

/**
 * Encodes an event (with its feed id when it has one) as its message string, applying the size
 * rule (a long `tx` error is cut to 300 characters).
 */
export function encodeEventMessage(event: ServiceEvent & { id?: string }): string {
  const message = encode(event);
  if (event.type !== "tx" || event.error === null || byteLength(message) <= MAX_MESSAGE_BYTES) {
    return message;
  }
  // Cut by code points, so a surrogate pair is never split into an unpaired half.
  const error = Array.from(event.error).slice(0, TX_ERROR_CUT_CHARS).join("");
  return encode({ ...event, error });
}

/** UTF-8 size of a message. */
export function byteLength(message: string): number {
  return encoder.encode(message).length;
}

function encode(event: ServiceEvent & { id?: string }): string {
  // Fields in the spec's order, so messages read the same everywhere; the id follows the type.
  const fields: Record<string, unknown> = { v: EVENT_VERSION, type: event.type, id: event.id };
  switch (event.type) {
    case "wallet_linked":
    case "wallet_unlinked":
      Object.assign(fields, { userId: event.userId, address: event.address });
      break;
    case "tx":
      Object.assign(fields, {
        key: event.key,
        kind: event.kind,
        status: event.status,
        signature: event.signature,
        userId: event.userId,
        error: event.error,
      });
      break;
    case "watch":
      Object.assign(fields, {
        name: event.name,
        address: event.address,
        signature: event.signature,
        slot: event.slot,
        failed: event.failed,
      });
      break;
    case "ping":
      fields.at = event.at;
      break;
    default: {
      // A reward's: what it is, then what happened to it.
      const { type: _type, key, userId, kind, mint, amount, ...rest } = event;
      Object.assign(fields, { key, userId, kind, mint, amount, ...rest });
    }
  }
  for (const [key, value] of Object.entries(fields)) {
    if (value === null || value === undefined) delete fields[key];
  }
  return JSON.stringify(fields);
}

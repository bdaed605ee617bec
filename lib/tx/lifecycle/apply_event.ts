/**
 * Applying an event of the lifecycle's table (`lifecycle.ts`) to a stored request record: the one
 * function every write of a request record goes through (`applyEvent`), and the record each move
 * makes.
 */
import type { PastAttempt, TxRequestRecord } from "../../../kv/tx_requests.ts";
import { type AttemptEvent, type NewAttempt, transitionOf } from "./lifecycle.ts";
import { ABANDONED_ERROR } from "./result.ts";

/**
 * The record after `event` at `now`, or null when the table lists no such move from its state
 * (or the move would change nothing). `record` is null for a key without one (`new`). The caller
 * commits it checked against the record it read.
 */
export function applyEvent(
  record: TxRequestRecord | null,
  event: AttemptEvent,
  now: number,
): TxRequestRecord | null {
  if (!transitionOf(record, event)) return null;
  if (event.type === "reserve") return reservedRecord(record, event.attempt, now);
  const next = nextRecord(record!, event);
  return next && { ...next, updatedAt: now };
}

/** A new attempt of the key whose latest attempt is `stored` (null: none), reserved at `now`. */
function reservedRecord(
  stored: TxRequestRecord | null,
  attempt: NewAttempt,
  now: number,
): TxRequestRecord {
  return {
    ...attempt,
    attempt: (stored?.attempt ?? 0) + 1,
    status: "pending",
    error: null,
    previous: stored ? pastAttempts(stored) : [],
    createdAt: stored?.createdAt ?? now,
    updatedAt: now,
  };
}

// Earlier attempts kept with a key; older ones, long proven dead, give way.
const MAX_PAST_ATTEMPTS = 50;

/** The key's earlier signed attempts once `stored` gives way to a new one. */
function pastAttempts(stored: TxRequestRecord): PastAttempt[] {
  const past = [...stored.previous];
  if (stored.signed && stored.signature) {
    past.push({
      attempt: stored.attempt,
      attemptId: stored.attemptId,
      signature: stored.signature,
      blockhash: stored.signed.blockhash,
      lastValidBlockHeight: stored.signed.lastValidBlockHeight,
      error: stored.error,
    });
  }
  return past.slice(-MAX_PAST_ATTEMPTS);
}

type RecordEvent = Exclude<AttemptEvent, { type: "reserve" }>;

function nextRecord(record: TxRequestRecord, event: RecordEvent): TxRequestRecord | null {
  switch (event.type) {
    case "sign":
      return { ...record, signature: event.signature, signed: event.tx };
    case "accept":
      return { ...record, signed: { ...record.signed!, accepted: true } };
    case "answer": {
      // An attempt already submitted (then found unproven) stays as it is.
      if (record.status !== "pending") return null;
      const signed = event.accepted ? { ...record.signed!, accepted: true } : record.signed;
      return { ...record, status: "submitted", signed };
    }
    case "expiry_unproven":
      return { ...record, expiryUnprovenAt: event.at };
    case "follow":
      return { ...record, checkJobId: event.checkJobId };
    case "confirm":
      return { ...record, status: "confirmed", error: null };
    case "abandon":
      return { ...record, status: "failed", error: ABANDONED_ERROR };
    case "fail": {
      const signed = event.refused && record.signed
        ? { ...record.signed, refused: true }
        : record.signed;
      return { ...record, status: "failed", error: event.error, signed };
    }
    case "found_landed":
      return { ...record, status: "confirmed", signature: event.signature, error: null };
  }
}

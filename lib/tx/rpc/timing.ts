/** How long transaction requests wait and how often they are checked; tests shorten these. */

import { ApiError } from "../../../core/api_error.ts";

/** Timing of sending and confirmation tracking. */
export interface TxTiming {
  /** Longest a transaction route takes to answer, from receiving the request, whatever the RPC does. */
  answerWithinMs: number;
  /** How long a transaction route waits for confirmation before answering `submitted`. */
  confirmWaitMs: number;
  /** How often the route polls the signature while it waits. */
  routePollMs: number;
  /** How often the same signed bytes are sent again while unconfirmed and unexpired. */
  rebroadcastMs: number;
  /** Interval of the background confirmation rounds of one attempt. */
  confirmIntervalMs: number;
  /**
   * How long past its sign-by time (the route's answer deadline) an unsigned attempt is abandoned:
   * a margin for the clocks of different instances.
   */
  abandonMarginMs: number;
  /** Timeout of each RPC call made while building, sending and confirming. */
  rpcTimeoutMs: number;
}

/** The spec's values: 15 s wait, confirmation rounds every 1.5 s, rebroadcast every 2 s; answers within 20 s. */
export function defaultTxTiming(): TxTiming {
  return {
    answerWithinMs: 20_000,
    confirmWaitMs: 15_000,
    routePollMs: 400,
    rebroadcastMs: 2_000,
    confirmIntervalMs: 1_500,
    abandonMarginMs: 5_000,
    rpcTimeoutMs: 8_000,
  };
}

// Kept back from the answer deadline for the final KV commits and the answer itself, with room
// for a busy machine.
const ANSWER_MARGIN_MS = 1_000;

/** The time a route has left: RPC calls abort when it runs out. */
export interface Deadline {
  /** Aborts when the route must stop waiting on the RPC. */
  signal: AbortSignal;
  /** Milliseconds left before `signal` aborts (0 once it has). */
  left(): number;
}

/** A route's deadline, started when its request arrived. */
export function startDeadline(timing: TxTiming): Deadline {
  const ms = Math.max(0, timing.answerWithinMs - ANSWER_MARGIN_MS);
  const end = performance.now() + ms;
  return {
    signal: AbortSignal.timeout(ms),
    left: () => Math.max(0, end - performance.now()),
  };
}

/**
 * Until when a quiet project's payout may leave its request's count to its reservation's commit
 * (`lib/quota/admission.ts`): the first quarter of its deadline, many round trips of a sound store.
 * A store slower than that counts it in a quota round from then on, beside the reservation, so a
 * reservation that cannot commit in time leaves no count to make after it.
 */
export function foldSignal(deadline: Deadline): AbortSignal {
  return AbortSignal.timeout(deadline.left() / 4);
}

/**
 * What a payout's waits before its reservation (for a round's places, for its turn on its windows)
 * end at: its deadline, or nothing for one past it already, whose signing stopped then and which is
 * to be recorded failed with what it waits for (the spec's 502 at step 14).
 */
export function reservationWaitSignal(signal: AbortSignal | undefined): AbortSignal | undefined {
  return signal?.aborted ? undefined : signal;
}

/**
 * The answer of a request whose deadline came before its reservation committed (a slow or busy
 * store): nothing of it was kept or sent, so the same key may be sent again.
 */
export function notReservedInTime(): ApiError {
  return new ApiError(
    "internal",
    "The request could not be reserved before its answer deadline; nothing was sent, and it may be sent again with the same idempotency key",
  );
}

/** An abort signal for one RPC call: its own timeout, or the deadline's, whichever comes first. */
export function rpcSignal(timing: TxTiming, deadline?: Deadline): AbortSignal {
  const own = AbortSignal.timeout(timing.rpcTimeoutMs);
  return deadline ? AbortSignal.any([own, deadline.signal]) : own;
}

/**
 * The abort signals of the RPC calls one operation makes in turn: a fresh one for each call, so
 * every call has its own timeout, and all end at the deadline when there is one.
 */
export type CallSignals = () => AbortSignal;

/** `CallSignals` with the timing's per-call timeout, ending at `deadline`. */
export function callSignals(timing: TxTiming, deadline?: Deadline): CallSignals {
  return () => rpcSignal(timing, deadline);
}

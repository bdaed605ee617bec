/** How long transaction requests wait and how often they are checked; tests shorten these. */

/** Timing of sending and confirmation tracking. */
export interface TxTiming {
  /** How long a transaction route waits for confirmation before answering `submitted`. */
  confirmWaitMs: number;
  /** How often the route polls the signature while it waits. */
  routePollMs: number;
  /** How often the same signed bytes are sent again while unconfirmed and unexpired. */
  rebroadcastMs: number;
  /** Interval of the background confirmation check of one attempt. */
  checkIntervalMs: number;
  /** How long a `pending` attempt without a signed transaction may stay so before it counts as abandoned. */
  abandonAfterMs: number;
  /** Timeout of each RPC call made while building, sending and checking. */
  rpcTimeoutMs: number;
}

/** The spec's values: 15 s wait, checks every 1.5 s, rebroadcast every 2 s. */
export function defaultTxTiming(): TxTiming {
  return {
    confirmWaitMs: 15_000,
    routePollMs: 400,
    rebroadcastMs: 2_000,
    checkIntervalMs: 1_500,
    abandonAfterMs: 120_000,
    rpcTimeoutMs: 8_000,
  };
}

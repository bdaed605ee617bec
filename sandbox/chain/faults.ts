// Fault injection: the controls tests and the control API use to make the cluster misbehave.
import type { LedgerState } from "./state.ts";

export type FaultScope = "rpc" | "das" | "all";

export type FaultSnapshot = {
  neverLand: number;
  delayLanding: { count: number; slots: number };
  http: { count: number; mode: "status" | "close"; status: number | null; scope: FaultScope };
  finalizationPaused: boolean;
  firstAvailableSlot: number;
  hideStatuses: boolean;
  historyLagSlots: number;
  heldTransactions: { signature: string; landAtSlot: number | null }[];
};

/** Fault controls of one cluster; every change is logged. */
export type ChainFaults = {
  /** Accepts the next `count` sent transactions but never lands them; they expire. */
  neverLand(count: number): void;
  /** Lands the next `count` sent transactions only `slots` slots after they arrive. */
  delayLanding(count: number, options: { slots: number }): void;
  /** Answers the next `count` HTTP requests with this status (default 503). */
  failHttp(
    count: number,
    options?: { status?: number | undefined; scope?: FaultScope | undefined },
  ): void;
  /** Closes the connection of the next `count` HTTP requests without an answer. */
  closeConnections(count: number, options?: { scope?: FaultScope | undefined }): void;
  /** Freezes the finalized slot; confirmed and processed keep moving. */
  pauseFinalization(): void;
  resumeFinalization(): void;
  /**
   * Makes the node forget its history before `slot`, as a node started from a snapshot does:
   * statuses, transactions and address history of earlier slots answer as unknown, and
   * getFirstAvailableBlock / minimumLedgerSlot report `slot`. 0 restores the whole history.
   */
  pruneHistory(slot: number): void;
  /**
   * Makes the node answer `null` for landed transactions from getSignatureStatuses and
   * getTransaction while it still claims its whole history (getFirstAvailableBlock 0, answers at
   * the tip): a node run without transaction history once its status cache rolled over, or a pool
   * member that lies. Address history (getSignaturesForAddress) still answers. False restores it.
   */
  hideStatuses(hidden: boolean): void;
  /**
   * Makes history reads (getSignatureStatuses, getTransaction, getSignaturesForAddress) see the
   * ledger as it was `slots` slots ago, with their context slot as far behind (a lagging pool
   * member); a later `minContextSlot` is refused as a real node does. 0 restores it.
   */
  lagHistory(slots: number): void;
  /** Disarms every fault (held transactions stay held). */
  clear(): void;
  snapshot(): FaultSnapshot;
};

export function createFaults(state: LedgerState): ChainFaults {
  const f = state.faults;
  const log = (fault: string, detail: Record<string, unknown>) =>
    state.options.log({ event: "fault_armed", fault, ...detail });
  return {
    neverLand(count) {
      f.dropNext = count;
      log("never_land", { count });
    },
    delayLanding(count, { slots }) {
      f.delayNext = count;
      f.delaySlots = slots;
      log("delay_landing", { count, slots });
    },
    failHttp(count, options = {}) {
      const status = options.status ?? 503;
      if (status < 500 || status > 599) {
        throw new Error("Cannot arm HTTP fault: status must be 5xx");
      }
      f.httpNext = count;
      f.httpFault = { mode: "status", status };
      f.httpScope = options.scope ?? "rpc";
      log("http_status", { count, status, scope: f.httpScope });
    },
    closeConnections(count, options = {}) {
      f.httpNext = count;
      f.httpFault = { mode: "close" };
      f.httpScope = options.scope ?? "rpc";
      log("http_close", { count, scope: f.httpScope });
    },
    pauseFinalization() {
      f.finalizationPaused = true;
      log("finalization_paused", { finalizedSlot: state.finalizedSlot });
    },
    resumeFinalization() {
      f.finalizationPaused = false;
      log("finalization_resumed", { finalizedSlot: state.finalizedSlot });
    },
    pruneHistory(slot) {
      f.firstAvailableSlot = slot;
      log("prune_history", { firstAvailableSlot: slot });
    },
    hideStatuses(hidden) {
      f.hideStatuses = hidden;
      log("hide_statuses", { hidden });
    },
    lagHistory(slots) {
      f.historyLagSlots = slots;
      log("lag_history", { slots });
    },
    clear() {
      f.dropNext = 0;
      f.delayNext = 0;
      f.httpNext = 0;
      f.finalizationPaused = false;
      f.firstAvailableSlot = 0;
      f.hideStatuses = false;
      f.historyLagSlots = 0;
      log("cleared", {});
    },
    snapshot() {
      return {
        neverLand: f.dropNext,
        delayLanding: { count: f.delayNext, slots: f.delaySlots },
        http: {
          count: f.httpNext,
          mode: f.httpFault.mode,
          status: f.httpFault.mode === "status" ? f.httpFault.status : null,
          scope: f.httpScope,
        },
        finalizationPaused: f.finalizationPaused,
        firstAvailableSlot: f.firstAvailableSlot,
        hideStatuses: f.hideStatuses,
        historyLagSlots: f.historyLagSlots,
        heldTransactions: [...state.pending.values()].map((p) => ({
          signature: p.signature,
          landAtSlot: p.landAtSlot,
        })),
      };
    },
  };
}

/**
 * The routes' confirmation waits, polled together: every route waiting on this instance asks for
 * its signature's status at the next poll of its cluster, and one poll looks them all up in
 * `getSignatureStatuses` calls of up to 256 signatures, one poll interval after the previous one
 * began. So a round end of 500 payouts waiting at once costs the node two calls a poll interval
 * instead of 500 (each with its own store read). A poll whose call fails answers its waiters with
 * the error: the routes keep waiting, as they did after a failed lookup of their own.
 */
import type { Rpc, Signature, SolanaRpcApi } from "@solana/kit";
import type { Cluster } from "../../../core/cluster.ts";
import type { StatusValue } from "./expiry_proof.ts";

/** Most signatures one `getSignatureStatuses` call takes. */
export const MAX_STATUS_BATCH = 256;

interface Waiter {
  signature: Signature;
  resolve(status: StatusValue): void;
  reject(error: unknown): void;
}

/** Per cluster: the waiters of the next poll and whether it is scheduled. */
interface ClusterPolls {
  waiters: Waiter[];
  timer: ReturnType<typeof setTimeout> | null;
  lastStart: number;
}

/** Polls the statuses the routes wait for, one batch per cluster and interval. */
export class StatusPoller {
  #clusters = new Map<Cluster, ClusterPolls>();
  #inFlight = new Set<Promise<void>>();

  constructor(
    private deps: {
      rpc: (cluster: Cluster) => Rpc<SolanaRpcApi>;
      /** The poll interval (the routes' poll interval, read on every poll: tests change it). */
      intervalMs: () => number;
      /** An abort signal for one call (its own time-out). */
      callSignal: () => AbortSignal;
    },
  ) {}

  /**
   * The signature's status (null while the node has no record of it) at the next poll; rejects
   * with the poll's error, or when `signal` aborts first.
   */
  next(cluster: Cluster, signature: Signature, signal?: AbortSignal): Promise<StatusValue> {
    return new Promise<StatusValue>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const polls = this.#polls(cluster);
      const waiter: Waiter = { signature, resolve, reject };
      polls.waiters.push(waiter);
      signal?.addEventListener("abort", () => {
        const i = polls.waiters.indexOf(waiter);
        if (i >= 0) polls.waiters.splice(i, 1);
        reject(signal.reason);
      }, { once: true });
      this.#schedule(cluster, polls);
    });
  }

  #polls(cluster: Cluster): ClusterPolls {
    let polls = this.#clusters.get(cluster);
    if (!polls) {
      polls = { waiters: [], timer: null, lastStart: -Infinity };
      this.#clusters.set(cluster, polls);
    }
    return polls;
  }

  #schedule(cluster: Cluster, polls: ClusterPolls): void {
    if (polls.timer !== null) return;
    const interval = this.deps.intervalMs();
    // One interval after the previous poll began; after a quiet spell, one interval from now (the
    // status of a transaction just sent is not there yet).
    const now = performance.now();
    const next = polls.lastStart + interval;
    polls.timer = setTimeout(() => {
      polls.timer = null;
      const poll = this.#poll(cluster, polls);
      this.#inFlight.add(poll);
      poll.finally(() => this.#inFlight.delete(poll));
    }, next > now ? next - now : interval);
  }

  /**
   * Resolves once no poll is in flight: a route that stopped waiting leaves the call its last poll
   * made running to its end (its answer is dropped), and a caller counting calls waits for it.
   */
  async idle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
  }

  async #poll(cluster: Cluster, polls: ClusterPolls): Promise<void> {
    polls.lastStart = performance.now();
    const waiters = polls.waiters.splice(0);
    if (waiters.length === 0) return;
    const signatures = [...new Set(waiters.map((w) => w.signature))];
    const found = new Map<Signature, StatusValue>();
    await Promise.all(
      Array.from({ length: Math.ceil(signatures.length / MAX_STATUS_BATCH) }, async (_, i) => {
        const batch = signatures.slice(i * MAX_STATUS_BATCH, (i + 1) * MAX_STATUS_BATCH);
        try {
          const { value } = await this.deps.rpc(cluster).getSignatureStatuses(batch, {
            searchTransactionHistory: true,
          }).send({ abortSignal: this.deps.callSignal() });
          batch.forEach((signature, j) => found.set(signature, value[j] ?? null));
        } catch (error) {
          for (const w of waiters) if (batch.includes(w.signature)) w.reject(error);
        }
      }),
    );
    for (const w of waiters) if (found.has(w.signature)) w.resolve(found.get(w.signature)!);
    if (polls.waiters.length > 0) this.#schedule(cluster, polls);
  }
}

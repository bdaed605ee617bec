/**
 * Per-project request quotas, counted durably before each answer, at almost no commits of their own.
 *
 * | Counted by         | When, and how                                                              |
 * | ------------------ | -------------------------------------------------------------------------- |
 * | a lease, in memory | a project busy here: allowance taken ahead, about `LEASE_MS` of its rate   |
 * |                    | (`lease_sizes.ts`), already counted in the store; topped up in the         |
 * |                    | background when half used, settled (unused part given back) when used up,  |
 * |                    | `LEASE_MS` after its last top-up, or on `close()`                          |
 * | a round            | requests that need the store: many projects in one commit checked on each  |
 * |                    | one's counters (`quota_store.ts`); on a local file 2 rounds of up to 100   |
 * |                    | projects at once, on a remote store (10 checks a commit) up to 16 of 10    |
 * | the route's commit | a quiet project's payout: its reservation counts it (`quota_fold.ts`)      |
 *
 * `quota_plan.ts` says what each round writes and why several instances stay exact.
 */
import type { Clock } from "../../core/clock.ts";
import { log } from "../../core/log.ts";
import { must } from "../../core/must.ts";
import { oncePerTurn } from "../../core/once_per_turn.ts";
import { QuotaStore } from "./quota_store.ts";
import { type Lease, LEASE_MS, type QuotaVerdict } from "./quota_plan.ts";
import { LeaseSizes, MAX_LEASE } from "./lease_sizes.ts";
import { type QuotaFold, quotaFold } from "./quota_fold.ts";

interface Waiter {
  resolve: (verdict: QuotaVerdict) => void;
  reject: (error: unknown) => void;
}

/** What one project waits for: requests to count, a lease to settle, or a lease to top up. */
interface Entry {
  waiters: Waiter[];
  settle?: Lease | undefined;
  /** Tops up the held lease ahead of need (no request waits for it). */
  refill?: boolean;
  onSettled: Array<() => void>;
}

interface Held {
  lease: Lease;
  timer: ReturnType<typeof setTimeout>;
  /** A top-up round is under way. */
  refilling: boolean;
}

type Item = { id: string; entry: Entry };

// Rounds on distinct projects never conflict within an instance. A local round of 100 projects
// stays within 100 checks and 1,000 mutations (5 each); a remote one within denokv's 10 checks.
const LOCAL_ROUNDS = { projects: 100, inFlight: 2 };
const REMOTE_ROUNDS = { projects: 10, inFlight: 16 };
// How soon requests deferred for other instances' leases are tried again.
const DEFER_MS = 50;

/** Counts every request durably before it is answered, from leases or shared commits. */
export class RequestQuota {
  #waiting = new Map<string, Entry>();
  #inRound = new Set<string>();
  #store: QuotaStore;
  #held = new Map<string, Held>();
  #sizes = new LeaseSizes();
  #deferred = new Set<ReturnType<typeof setTimeout>>();
  #schedule = oncePerTurn(() => this.#flush());
  #closing = false;
  #roundsInFlight = 0;
  #rounds: typeof LOCAL_ROUNDS;
  /** Projects whose request a commit of a route is counting (`foldable`). */
  #folding = new Set<string>();

  /** `remote`: the store is reached over the network (see `isRemoteKvPath`). */
  constructor(
    kv: Deno.Kv,
    private clock: Clock,
    options: { remote?: boolean } = {},
  ) {
    this.#store = new QuotaStore(kv, () => clock.now());
    this.#rounds = options.remote ? REMOTE_ROUNDS : LOCAL_ROUNDS;
  }

  /** Counts one request for the project and says whether it is within both quotas. */
  count(projectId: string): Promise<QuotaVerdict> {
    this.#sizes.note(projectId);
    const held = this.#held.get(projectId);
    if (held && held.lease.remaining > 0 && this.#inWindow(held.lease)) {
      held.lease.remaining--;
      // Half used: top it up in the background, so a busy project's requests never wait.
      if (
        !held.refilling && !this.#closing && held.lease.remaining * 2 < this.#sizes.block(projectId)
      ) {
        held.refilling = true;
        this.#refill(projectId);
      }
      return Promise.resolve("ok");
    }
    return new Promise((resolve, reject) => {
      this.#entry(projectId).waiters.push({ resolve, reject });
      this.#schedule();
    });
  }

  /**
   * One request of a project quiet here (no lease held, no round nor fold under way), for a commit
   * of the route's own to count (`quota_fold.ts`); null when the project is busy: `count` it.
   */
  foldable(projectId: string): QuotaFold | null {
    const busy = this.#held.has(projectId) || this.#waiting.has(projectId) ||
      this.#inRound.has(projectId) || this.#folding.has(projectId);
    if (busy || this.#closing) return null;
    this.#sizes.note(projectId);
    this.#folding.add(projectId);
    return quotaFold(projectId, (written) => {
      this.#folding.delete(projectId);
      if (written) this.#store.remember(written);
    });
  }

  /**
   * Settles this instance's lease of the project at once, so what it used is in the store's usage
   * counters (a usage page reads them); other instances' leases settle within their few seconds.
   */
  settle(projectId: string): Promise<void> {
    const entry = this.#settleLease(projectId);
    if (!entry) return Promise.resolve();
    return new Promise((resolve) => entry.onSettled.push(resolve));
  }

  /** Gives back every lease's unused allowance and stops the timers; the store stays open. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const timer of this.#deferred) clearTimeout(timer);
    this.#deferred.clear();
    // Top-ups under way may still hand out leases: settle until none is left.
    while (this.#held.size > 0 || this.#roundsInFlight > 0) {
      const settled = [...this.#held.keys()].map((id) =>
        new Promise<void>((resolve) => this.#settleLease(id)!.onSettled.push(resolve))
      );
      this.#schedule();
      await Promise.all(settled);
      if (this.#roundsInFlight > 0) await new Promise((r) => setTimeout(r, 5));
    }
  }

  #refill(projectId: string): void {
    this.#queued(projectId).refill = true;
    this.#schedule();
  }

  #entry(projectId: string): Entry {
    const entry = this.#queued(projectId);
    // A project goes to the store only when its lease is used up or over: settle it in that round.
    entry.settle ??= this.#takeLease(projectId);
    return entry;
  }

  /** The project's waiting entry, queued empty if it has none. */
  #queued(projectId: string): Entry {
    let entry = this.#waiting.get(projectId);
    if (!entry) {
      entry = { waiters: [], onSettled: [] };
      this.#waiting.set(projectId, entry);
    }
    return entry;
  }

  /** Takes the project's lease out of use and returns it. */
  #takeLease(projectId: string): Lease | undefined {
    const held = this.#held.get(projectId);
    if (!held) return undefined;
    this.#held.delete(projectId);
    clearTimeout(held.timer);
    return held.lease;
  }

  /** Takes the project's lease out of use and queues it to be settled in the next round. */
  #settleLease(projectId: string): Entry | undefined {
    if (!this.#held.has(projectId)) return undefined;
    // Queuing the entry takes the lease into it.
    const entry = this.#entry(projectId);
    this.#schedule();
    return entry;
  }

  #inWindow(lease: Lease): boolean {
    const now = this.clock.now();
    return lease.minute === Math.floor(now / 60_000) && lease.day === Math.floor(now / 86_400_000);
  }

  /** Allowance worth taking beyond what `entry` waits for. */
  #prefetch(projectId: string, entry: Entry): number {
    const waiting = entry.waiters.length;
    const held = this.#held.get(projectId)?.lease.remaining ?? 0;
    // A round that only settles a lease means the project went quiet here: no new lease.
    if (waiting === 0 && !entry.refill) return 0;
    // Never more unused allowance here than MAX_LEASE: the most a crash can lose.
    return Math.max(0, Math.min(this.#sizes.block(projectId), MAX_LEASE - held) - waiting);
  }

  #flush(): void {
    while (this.#roundsInFlight < this.#rounds.inFlight) {
      const round: Item[] = [];
      for (const [id, entry] of this.#waiting) {
        if (this.#inRound.has(id)) continue;
        // A lease that ran out after this entry queued is settled with it; a top-up keeps it.
        if (entry.waiters.length > 0 || !entry.refill) entry.settle ??= this.#takeLease(id);
        round.push({ id, entry });
        this.#waiting.delete(id);
        this.#inRound.add(id);
        if (round.length === this.#rounds.projects) break;
      }
      if (round.length === 0) return;
      this.#roundsInFlight++;
      this.#commit(round).finally(() => {
        this.#roundsInFlight--;
        for (const { id } of round) this.#inRound.delete(id);
        this.#schedule();
      });
    }
  }

  async #commit(round: Item[]): Promise<void> {
    try {
      const plans = await this.#store.commit(round.map(({ id, entry }) => ({
        id,
        request: {
          waiting: entry.waiters.length,
          prefetch: this.#prefetch(id, entry),
          settle: entry.settle,
        },
      })));
      round.forEach(({ id, entry }, i) => {
        const { verdicts, leased, next } = must(plans[i], `the plan of ${id}`);
        verdicts.forEach((verdict, j) => entry.waiters[j]?.resolve(verdict));
        for (const settled of entry.onSettled) settled();
        if (leased > 0) this.#hold(id, { minute: next.minute, day: next.day, granted: leased });
        else if (entry.refill && this.#held.get(id)?.refilling) this.#endRefill(id);
        const deferred = entry.waiters.slice(verdicts.length);
        if (deferred.length > 0) this.#defer(id, deferred);
      });
    } catch (error) {
      log("error", "Cannot count requests", { error, projects: round.length });
      for (const { entry } of round) {
        for (const waiter of entry.waiters) waiter.reject(error);
        for (const settled of entry.onSettled) settled();
      }
    }
  }

  /** Keeps a new lease and answers, from it, requests of the project that queued meanwhile. */
  #hold(projectId: string, lease: Omit<Lease, "remaining">): void {
    const current = this.#held.get(projectId);
    if (current) {
      if (current.lease.minute === lease.minute && current.lease.day === lease.day) {
        // A top-up joins the lease; both are settled together.
        current.lease.granted += lease.granted;
        current.lease.remaining += lease.granted;
        this.#endRefill(projectId);
        return;
      }
      // The window changed while topping up: the old lease is settled on its own.
      this.#settleLease(projectId);
    }
    const held: Lease = { ...lease, remaining: lease.granted };
    const entry = this.#waiting.get(projectId);
    while (entry && entry.waiters.length > 0 && held.remaining > 0) {
      held.remaining--;
      entry.waiters.shift()!.resolve("ok");
    }
    if (entry && entry.waiters.length === 0 && !entry.settle) this.#waiting.delete(projectId);
    const timer = this.#settleLater(projectId, held);
    this.#held.set(projectId, { lease: held, timer, refilling: false });
  }

  /** Ends a top-up: the lease is settled `LEASE_MS` after its last one unless used up first. */
  #endRefill(projectId: string): void {
    const held = this.#held.get(projectId)!;
    held.refilling = false;
    clearTimeout(held.timer);
    held.timer = this.#settleLater(projectId, held.lease);
  }

  /** Settles `lease` `LEASE_MS` from now if the project still holds that same lease. */
  #settleLater(projectId: string, lease: Lease): ReturnType<typeof setTimeout> {
    return setTimeout(() => {
      if (this.#held.get(projectId)?.lease === lease) this.#settleLease(projectId);
    }, LEASE_MS);
  }

  /** Tries requests again shortly: other instances' leases of this minute may come back. */
  #defer(projectId: string, waiters: Waiter[]): void {
    const timer = setTimeout(() => {
      this.#deferred.delete(timer);
      this.#entry(projectId).waiters.unshift(...waiters);
      this.#schedule();
    }, DEFER_MS);
    this.#deferred.add(timer);
  }
}

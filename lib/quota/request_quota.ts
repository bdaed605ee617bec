/**
 * Per-project request quotas, counted durably before each answer, that cost almost no commits.
 *
 * Leases: a project busy on this instance takes allowance ahead of its requests, a block sized to
 * about a second of its rate here (none below 4 requests a second), and the requests then answer
 * from memory: that allowance is already counted in the store. A lease is settled (its unused part
 * given back) when it runs out, after `LEASE_MS`, or on `close()`; `quota_plan.ts` says what each
 * round writes and why several instances stay exact.
 *
 * Group commit: requests that do need the store are counted together. A round takes the waiting
 * projects of every shard not already being committed (at most `MAX_PROJECTS_PER_COMMIT`, so a
 * commit stays far inside the store's 1,000 mutations and 10 checks) and writes their counters in
 * one atomic commit that checks the shards' version keys (see `kv/request_counts.ts`). At most two
 * rounds run at once; requests arriving meanwhile wait for the next one. What this instance wrote
 * last is remembered, so a busy shard needs no read; a conflict forgets it, re-reads and retries.
 * Each round writes its own id into the shard versions, so a commit whose answer was lost (a remote
 * store's network) is recognised as applied instead of being counted twice.
 */
import type { Clock } from "../clock.ts";
import { log } from "../log.ts";
import { ulid } from "../ids.ts";
import {
  type RequestCounts,
  requestCountsKey,
  requestShardKey,
  requestShardOf,
  requestUsageDayKey,
  requestUsageMinuteKey,
} from "../../kv/request_counts.ts";
import { type Lease, LEASE_MS, planProject, type QuotaVerdict } from "./quota_plan.ts";

export { REQUESTS_PER_DAY, REQUESTS_PER_MINUTE } from "./quota_plan.ts";
export type { QuotaVerdict } from "./quota_plan.ts";

interface Waiter {
  resolve: (verdict: QuotaVerdict) => void;
  reject: (error: unknown) => void;
}

/** What one project waits for in its shard's queue. */
interface Entry {
  waiters: Waiter[];
  settle?: Lease;
  onSettled: Array<() => void>;
}

/** A shard's waiting projects. */
interface ShardQueue {
  waiting: Map<string, Entry>;
  inFlight: boolean;
}

/** A shard as this instance last saw it: its version entry and the counters read or written since. */
interface KnownShard {
  version: Deno.KvEntryMaybe<string>;
  counts: Map<string, RequestCounts | null>;
}

interface Held {
  lease: Lease;
  timer: ReturnType<typeof setTimeout>;
}

type Item = { shard: number; id: string; entry: Entry };

// Overlaps one round's reads with another's write; few enough that rounds fill up.
const MAX_COMMITS_IN_FLIGHT = 2;
// Each project writes its counters and up to four usage sums; 8 shard versions on top: < 1,000.
const MAX_PROJECTS_PER_COMMIT = 150;
// Bounds memory: past this many remembered counters a shard starts again from the store.
const MAX_KNOWN_PER_SHARD = 20_000;
// Below this rate (requests a second on this instance) blocks would be of one: no lease.
const MIN_LEASE_RATE = 4;
// A tenth of the minute's allowance: what one crash can lose at most per project and instance.
export const MAX_LEASE = 60;
// How soon requests deferred for other instances' leases are tried again.
const DEFER_MS = 50;

/** Counts every request durably before it is answered, from leases or shared commits. */
export class RequestQuota {
  #shards = new Map<number, ShardQueue>();
  #known = new Map<number, KnownShard>();
  #held = new Map<string, Held>();
  #rates = new Map<string, { second: number; current: number; previous: number }>();
  #deferred = new Set<ReturnType<typeof setTimeout>>();
  #scheduled = false;
  #commitsInFlight = 0;

  constructor(private kv: Deno.Kv, private clock: Clock) {}

  /** Counts one request for the project and says whether it is within both quotas. */
  count(projectId: string): Promise<QuotaVerdict> {
    this.#noteRate(projectId);
    const held = this.#held.get(projectId);
    if (held && held.lease.remaining > 0 && this.#inWindow(held.lease)) {
      held.lease.remaining--;
      return Promise.resolve("ok");
    }
    return new Promise((resolve, reject) => {
      this.#entry(projectId).waiters.push({ resolve, reject });
      this.#schedule();
    });
  }

  /** Gives back every lease's unused allowance and stops the timers; the store stays open. */
  async close(): Promise<void> {
    for (const timer of this.#deferred) clearTimeout(timer);
    this.#deferred.clear();
    const settled = [...this.#held.keys()].map((id) =>
      new Promise<void>((resolve) => this.#settleLease(id)!.onSettled.push(resolve))
    );
    this.#schedule();
    await Promise.all(settled);
  }

  #entry(projectId: string): Entry {
    const shard = requestShardOf(projectId);
    let queue = this.#shards.get(shard);
    if (!queue) {
      queue = { waiting: new Map(), inFlight: false };
      this.#shards.set(shard, queue);
    }
    let entry = queue.waiting.get(projectId);
    if (!entry) {
      entry = { waiters: [], onSettled: [] };
      queue.waiting.set(projectId, entry);
    }
    // A project goes to the store only when its lease is used up or over: settle it in that round.
    entry.settle ??= this.#takeLease(projectId);
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

  #noteRate(projectId: string): void {
    const second = Math.floor(performance.now() / 1000);
    const rate = this.#rates.get(projectId);
    if (rate?.second === second) rate.current++;
    else {
      if (this.#rates.size > 50_000) this.#rates.clear();
      const previous = rate?.second === second - 1 ? rate.current : 0;
      this.#rates.set(projectId, { second, current: 1, previous });
    }
  }

  /** Allowance worth taking beyond `waiting`: about a second of the project's rate here. */
  #prefetch(projectId: string, waiting: number): number {
    // A round that only settles a lease means the project went quiet here: no new lease.
    if (waiting === 0) return 0;
    const rate = this.#rates.get(projectId);
    const second = Math.floor(performance.now() / 1000);
    const recent = rate && rate.second >= second - 1;
    const perSecond = recent ? Math.max(rate.previous, rate.current) : 0;
    if (perSecond < MIN_LEASE_RATE) return 0;
    return Math.max(0, Math.min(MAX_LEASE, Math.round(perSecond * LEASE_MS / 1000)) - waiting);
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    if (this.#commitsInFlight >= MAX_COMMITS_IN_FLIGHT) return;
    const round: Item[] = [];
    const queues: ShardQueue[] = [];
    for (const [shard, queue] of this.#shards) {
      if (queue.inFlight || queue.waiting.size === 0) continue;
      if (round.length >= MAX_PROJECTS_PER_COMMIT) break;
      queue.inFlight = true;
      queues.push(queue);
      for (const [id, entry] of queue.waiting) {
        if (round.length >= MAX_PROJECTS_PER_COMMIT) break;
        // A lease that ran out after this entry queued is settled with it.
        entry.settle ??= this.#takeLease(id);
        round.push({ shard, id, entry });
        queue.waiting.delete(id);
      }
    }
    if (round.length === 0) return;
    this.#commitsInFlight++;
    this.#commit(round).finally(() => {
      this.#commitsInFlight--;
      for (const queue of queues) queue.inFlight = false;
      this.#schedule();
    });
  }

  async #commit(round: Item[]): Promise<void> {
    try {
      const plans = await this.#commitRound(round);
      round.forEach(({ id, entry }, i) => {
        const { verdicts, leased, next } = plans[i];
        entry.waiters.slice(0, verdicts.length).forEach((w, j) => w.resolve(verdicts[j]));
        for (const settled of entry.onSettled) settled();
        if (leased > 0) this.#hold(id, { minute: next.minute, day: next.day, granted: leased });
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
    const held: Lease = { ...lease, remaining: lease.granted };
    const queue = this.#shards.get(requestShardOf(projectId));
    const entry = queue?.waiting.get(projectId);
    while (entry && entry.waiters.length > 0 && held.remaining > 0) {
      held.remaining--;
      entry.waiters.shift()!.resolve("ok");
    }
    if (entry && entry.waiters.length === 0 && !entry.settle) queue!.waiting.delete(projectId);
    const timer = setTimeout(() => {
      if (this.#held.get(projectId)?.lease === held) this.#settleLease(projectId);
    }, LEASE_MS);
    this.#held.set(projectId, { lease: held, timer });
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

  /** Plans and commits one round; returns each project's plan. */
  async #commitRound(round: Item[]) {
    const shards = [...new Set(round.map((r) => r.shard))];
    for (let attempt = 0; attempt < 100; attempt++) {
      const known = await this.#readShards(shards, round);
      const now = this.clock.now();
      const roundId = ulid();
      const op = this.kv.atomic();
      for (const shard of shards) {
        op.check(known.get(shard)!.version).set(requestShardKey(shard), roundId);
      }
      const plans = round.map(({ shard, id, entry }) => {
        const plan = planProject(known.get(shard)!.counts.get(id) ?? null, {
          waiting: entry.waiters.length,
          prefetch: this.#prefetch(id, entry.waiters.length),
          settle: entry.settle,
        }, now);
        op.set(requestCountsKey(id), plan.next);
        for (const { minute, day, n } of plan.used) {
          op.sum(requestUsageMinuteKey(id, minute), BigInt(n));
          op.sum(requestUsageDayKey(id, day), BigInt(n));
        }
        return plan;
      });
      const versionstamp = await this.#commitOnce(op, shards, roundId);
      if (versionstamp) {
        for (const shard of shards) {
          const entry = known.get(shard)!;
          entry.version = { key: requestShardKey(shard), value: roundId, versionstamp };
        }
        round.forEach(({ shard, id }, i) => known.get(shard)!.counts.set(id, plans[i].next));
        return plans;
      }
      // Another instance counted in one of these shards: forget them and read afresh.
      for (const shard of shards) this.#known.delete(shard);
    }
    throw new Error("Cannot count requests: too many concurrent changes");
  }

  /** Commits; when the answer is lost, the shard versions tell whether this round applied. */
  async #commitOnce(
    op: Deno.AtomicOperation,
    shards: number[],
    roundId: string,
  ): Promise<string | null> {
    let lost: unknown;
    try {
      const result = await op.commit();
      if (result.ok) return result.versionstamp;
    } catch (error) {
      lost = error;
    }
    const versions = await this.kv.getMany<string[]>(shards.map(requestShardKey));
    if (versions.every((v) => v.value === roundId)) return versions[0].versionstamp;
    if (lost) log("warn", "A request count commit failed; counting again", { error: lost });
    return null;
  }

  /** Brings what is known of `shards` up to date for `round`, reading only what is missing. */
  async #readShards(shards: number[], round: Item[]): Promise<Map<number, KnownShard>> {
    for (const shard of shards) {
      if ((this.#known.get(shard)?.counts.size ?? 0) > MAX_KNOWN_PER_SHARD) {
        this.#known.delete(shard);
      }
    }
    const missingShards = shards.filter((s) => !this.#known.has(s));
    if (missingShards.length > 0) {
      // Versions are read before any counter, so a counter read later is never older than the
      // version the commit checks.
      const versions = await this.kv.getMany<string[]>(missingShards.map(requestShardKey));
      missingShards.forEach((s, i) =>
        this.#known.set(s, { version: versions[i], counts: new Map() })
      );
    }
    const missing = round.filter(({ shard, id }) => !this.#known.get(shard)!.counts.has(id));
    for (let i = 0; i < missing.length; i += 10) {
      const slice = missing.slice(i, i + 10);
      const entries = await this.kv.getMany<RequestCounts[]>(
        slice.map((c) => requestCountsKey(c.id)),
      );
      slice.forEach(({ shard, id }, j) => this.#known.get(shard)!.counts.set(id, entries[j].value));
    }
    return this.#known;
  }
}

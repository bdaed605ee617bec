/**
 * Exact per-project request quotas with group commit.
 *
 * A durable commit per request would cap a route near the store's commit rate, so concurrent
 * requests are counted together. A round takes every waiting request of every shard that is not
 * already being committed, gives each request its position in its project's window, and writes
 * the new totals in one atomic commit that checks the shards' version keys (see
 * `kv/request_counts.ts`). At most two rounds run at once; requests arriving meanwhile wait for the
 * next one, so rounds grow with load instead of the commit count. What this instance wrote last is
 * remembered, so a busy shard needs no read; a conflict with another instance forgets it, re-reads
 * and retries, so the limits stay exact across instances sharing one KV.
 */
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import type { Clock } from "../../core/clock.ts";
import { log } from "../../core/log.ts";
import {
  type RequestCounts,
  requestCountsKey,
  requestShardKey,
  requestShardOf,
} from "../../kv/request_counts.ts";
import { addRequestUsage } from "../../kv/usage.ts";

/** Requests a project may make in one clock minute. */
export const REQUESTS_PER_MINUTE = 600;
/** Requests a project may make in one UTC day. */
export const REQUESTS_PER_DAY = 100_000;

/** The outcome of counting one request. */
type QuotaVerdict = "ok" | "rate_limited" | "daily_quota_exceeded";

interface Waiter {
  resolve: (verdict: QuotaVerdict) => void;
  reject: (error: unknown) => void;
}

/** Waiting requests of one shard, by project. */
interface ShardQueue {
  waiting: Map<string, Waiter[]>;
  inFlight: boolean;
}

/** A shard as this instance last saw it: its version entry and the counters read or written since. */
interface KnownShard {
  version: Deno.KvEntryMaybe<number>;
  counts: Map<string, RequestCounts | null>;
}

// Overlaps one round's reads with another's write; few enough that rounds fill up.
const MAX_COMMITS_IN_FLIGHT = 2;
// Keeps a commit far inside the store's mutation and size limits (1,000 mutations): each project
// takes five (its counters, and its usage minute and day, `kv/usage.ts`).
const MAX_PROJECTS_PER_COMMIT = 150;
// Bounds memory: past this many remembered counters a shard starts again from the store.
const MAX_KNOWN_PER_SHARD = 20_000;

/** Counts every request durably before it is answered, batching concurrent ones into shared commits. */
export class RequestQuota {
  #shards = new Map<number, ShardQueue>();
  #known = new Map<number, KnownShard>();
  #scheduled = false;
  #commitsInFlight = 0;

  constructor(private kv: Deno.Kv, private clock: Clock) {}

  /** Counts one request for the project and says whether it is within both quotas. */
  count(projectId: string): Promise<QuotaVerdict> {
    return new Promise((resolve, reject) => {
      const shard = requestShardOf(projectId);
      let queue = this.#shards.get(shard);
      if (!queue) {
        queue = { waiting: new Map(), inFlight: false };
        this.#shards.set(shard, queue);
      }
      const waiters = queue.waiting.get(projectId);
      if (waiters) waiters.push({ resolve, reject });
      else queue.waiting.set(projectId, [{ resolve, reject }]);
      this.#schedule();
    });
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
    const round: Array<{ shard: number; queue: ShardQueue; batch: Map<string, Waiter[]> }> = [];
    let projects = 0;
    for (const [shard, queue] of this.#shards) {
      if (queue.inFlight || queue.waiting.size === 0) continue;
      if (projects > 0 && projects + queue.waiting.size > MAX_PROJECTS_PER_COMMIT) break;
      projects += queue.waiting.size;
      queue.inFlight = true;
      round.push({ shard, queue, batch: queue.waiting });
      queue.waiting = new Map();
    }
    if (round.length === 0) return;
    this.#commitsInFlight++;
    this.#commit(round).finally(() => {
      this.#commitsInFlight--;
      for (const { queue } of round) queue.inFlight = false;
      this.#schedule();
    });
  }

  async #commit(round: Array<{ shard: number; batch: Map<string, Waiter[]> }>): Promise<void> {
    const counts = round.flatMap(({ shard, batch }) =>
      [...batch].map(([id, waiters]) => ({ shard, id, n: waiters.length, waiters }))
    );
    try {
      const before = await this.#commitCounts(round.map((r) => r.shard), counts);
      counts.forEach(({ waiters }, i) => {
        const { minute, day } = before[i];
        waiters.forEach((waiter, position) => {
          // Position p (1-based) sees the counters as they stood after the p-th request.
          const p = position + 1;
          if (day + p > REQUESTS_PER_DAY) waiter.resolve("daily_quota_exceeded");
          else if (minute + p > REQUESTS_PER_MINUTE) waiter.resolve("rate_limited");
          else waiter.resolve("ok");
        });
      });
    } catch (error) {
      log("error", "Cannot count requests", { error, projects: counts.map((c) => c.id) });
      for (const { waiters } of counts) for (const waiter of waiters) waiter.reject(error);
    }
  }

  /** Adds `n` to each project's counters and returns the totals as they were before. */
  async #commitCounts(
    shards: number[],
    counts: Array<{ shard: number; id: string; n: number }>,
  ): Promise<Array<{ minute: number; day: number }>> {
    return await commitWithRetry("count requests", async () => {
      const known = await this.#readShards(shards, counts);
      const now = this.clock.now();
      const minute = Math.floor(now / 60_000);
      const day = Math.floor(now / 86_400_000);
      const op = this.kv.atomic();
      for (const shard of shards) {
        const { version } = known.get(shard)!;
        op.check(version).set(requestShardKey(shard), (version.value ?? 0) + 1);
      }
      const written = counts.map(({ shard, id, n }) => {
        const stored = known.get(shard)!.counts.get(id);
        const m = stored?.minute === minute ? stored.minuteCount : 0;
        const d = stored?.day === day ? stored.dayCount : 0;
        const next: RequestCounts = { minute, minuteCount: m + n, day, dayCount: d + n };
        op.set(requestCountsKey(id), next);
        addRequestUsage(op, id, { at: now, count: n });
        return { shard, id, next, before: { minute: m, day: d } };
      });
      const result = await op.commit();
      if (result.ok) {
        for (const shard of shards) {
          const entry = known.get(shard)!;
          const value = (entry.version.value ?? 0) + 1;
          entry.version = { key: requestShardKey(shard), value, versionstamp: result.versionstamp };
        }
        for (const { shard, id, next } of written) known.get(shard)!.counts.set(id, next);
        return written.map((w) => w.before);
      }
      // Another instance counted in one of these shards: forget them and read afresh.
      for (const shard of shards) this.#known.delete(shard);
      return RETRY;
    });
  }

  /** Brings what is known of `shards` up to date for `counts`, reading only what is missing. */
  async #readShards(
    shards: number[],
    counts: Array<{ shard: number; id: string }>,
  ): Promise<Map<number, KnownShard>> {
    for (const shard of shards) {
      if ((this.#known.get(shard)?.counts.size ?? 0) > MAX_KNOWN_PER_SHARD) {
        this.#known.delete(shard);
      }
    }
    const missingShards = shards.filter((s) => !this.#known.has(s));
    if (missingShards.length > 0) {
      // Versions are read before any counter, so a counter read later is never older than the
      // version the commit checks.
      const versions = await this.kv.getMany<number[]>(missingShards.map(requestShardKey));
      missingShards.forEach((s, i) =>
        this.#known.set(s, { version: versions[i], counts: new Map() })
      );
    }
    const missing = counts.filter(({ shard, id }) => !this.#known.get(shard)!.counts.has(id));
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

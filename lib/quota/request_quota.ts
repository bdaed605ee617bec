/**
 * Exact per-project request quotas with group commit.
 *
 * A durable commit per request would cap a route near the store's commit rate, so concurrent
 * requests are counted together: each round reads the counters of up to ten projects, assigns
 * every waiting request its position in the window, and writes the new totals in one atomic
 * commit guarded by versionstamp checks. A conflict with another instance re-reads and retries,
 * so the limits stay exact across instances sharing one KV.
 */
import type { Clock } from "../clock.ts";
import { log } from "../log.ts";
import { type RequestCounts, requestCountsKey } from "../../kv/request_counts.ts";

/** Requests a project may make in one clock minute. */
export const REQUESTS_PER_MINUTE = 600;
/** Requests a project may make in one UTC day. */
export const REQUESTS_PER_DAY = 100_000;

/** The outcome of counting one request. */
export type QuotaVerdict = "ok" | "rate_limited" | "daily_quota_exceeded";

interface Waiter {
  resolve: (verdict: QuotaVerdict) => void;
  reject: (error: unknown) => void;
}

interface ProjectQueue {
  waiting: Waiter[];
  inFlight: boolean;
}

// One check per project; the self-hosted KV server allows ten per commit.
const PROJECTS_PER_COMMIT = 10;

/** Counts every request durably before it is answered, batching concurrent ones into shared commits. */
export class RequestQuota {
  #queues = new Map<string, ProjectQueue>();
  #scheduled = false;

  constructor(private kv: Deno.Kv, private clock: Clock) {}

  /** Counts one request for the project and says whether it is within both quotas. */
  count(projectId: string): Promise<QuotaVerdict> {
    return new Promise((resolve, reject) => {
      let queue = this.#queues.get(projectId);
      if (!queue) {
        queue = { waiting: [], inFlight: false };
        this.#queues.set(projectId, queue);
      }
      queue.waiting.push({ resolve, reject });
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
    const ready: string[] = [];
    for (const [projectId, queue] of this.#queues) {
      if (queue.inFlight) continue;
      if (queue.waiting.length === 0) {
        this.#queues.delete(projectId);
        continue;
      }
      ready.push(projectId);
    }
    for (let i = 0; i < ready.length; i += PROJECTS_PER_COMMIT) {
      const chunk = ready.slice(i, i + PROJECTS_PER_COMMIT).map((id) => {
        const queue = this.#queues.get(id)!;
        queue.inFlight = true;
        return { id, queue, batch: queue.waiting.splice(0) };
      });
      this.#commit(chunk).finally(() => {
        for (const { queue } of chunk) queue.inFlight = false;
        this.#schedule();
      });
    }
  }

  async #commit(chunk: Array<{ id: string; batch: Waiter[] }>): Promise<void> {
    try {
      const totals = await this.#commitCounts(chunk.map((c) => ({ id: c.id, n: c.batch.length })));
      chunk.forEach(({ batch }, i) => {
        const { minute, day } = totals[i];
        batch.forEach((waiter, position) => {
          // Position p (1-based) sees the counters as they stood after the p-th request.
          const p = position + 1;
          if (day + p > REQUESTS_PER_DAY) waiter.resolve("daily_quota_exceeded");
          else if (minute + p > REQUESTS_PER_MINUTE) waiter.resolve("rate_limited");
          else waiter.resolve("ok");
        });
      });
    } catch (error) {
      log("error", "Cannot count requests", { error, projects: chunk.map((c) => c.id) });
      for (const { batch } of chunk) for (const waiter of batch) waiter.reject(error);
    }
  }

  /** Adds `n` to each project's counters and returns the totals as they were before. */
  async #commitCounts(
    counts: Array<{ id: string; n: number }>,
  ): Promise<Array<{ minute: number; day: number }>> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const now = this.clock.now();
      const minute = Math.floor(now / 60_000);
      const day = Math.floor(now / 86_400_000);
      const entries = await this.kv.getMany<RequestCounts[]>(
        counts.map(({ id }) => requestCountsKey(id)),
      );
      const op = this.kv.atomic().check(...entries);
      const before = counts.map(({ id, n }, i) => {
        const stored = entries[i].value;
        const m = stored?.minute === minute ? stored.minuteCount : 0;
        const d = stored?.day === day ? stored.dayCount : 0;
        const next: RequestCounts = { minute, minuteCount: m + n, day, dayCount: d + n };
        op.set(requestCountsKey(id), next);
        return { minute: m, day: d };
      });
      if ((await op.commit()).ok) return before;
    }
    throw new Error("Cannot count requests: too many concurrent changes");
  }
}

/**
 * Recording events under a burst: 300 commits of one project in flight at once, half on each of
 * two instances sharing one KV file (a round's rewards settling together). The baseline is the
 * same checked commit on the feed counter retried without the per-process queue of
 * `lib/events/record.ts`; "errors" counts the retries each needed.
 */
import { addFeedEvents, getEventSeqEntry } from "../kv/event_feed.ts";
import { commitWithEvents } from "../lib/events/record.ts";
import { createTestApp, type TestApp } from "../tests/support/test_app.ts";
import type { LoadResult } from "./load.ts";

const IN_FLIGHT = 300;

/** Runs bursts of both kinds for about `seconds` each; the baseline comes first. */
export async function benchEventFeed(seconds: number): Promise<LoadResult[]> {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const a = await createTestApp({ kvPath: path });
  const b = await createTestApp({ kvPath: path, clock: a.clock });
  try {
    const baseline = await bursts("Checked commit, retried (baseline)", seconds, async (i) => {
      const kv = (i % 2 ? a : b).kv;
      for (let retries = 0;; retries++) {
        const op = kv.atomic();
        const seq = await getEventSeqEntry(kv, "bench");
        addFeedEvents(op, "bench", { seq, events: [{ type: "ping", at: i }], now: 0 });
        if ((await op.commit()).ok) return retries;
      }
    });
    const queued = await bursts("commitWithEvents (queued per project)", seconds, async (i) => {
      const { ctx } = i % 2 ? a : b;
      for (let retries = 0;; retries++) {
        const events = [{ type: "ping" as const, at: i }];
        const committed = await commitWithEvents(ctx, ctx.kv.atomic(), {
          projectId: "bench",
          events,
          deliver: false,
        });
        if (committed.ok) return retries;
      }
    });
    return [baseline, queued];
  } finally {
    await closeAll(a, b);
    await Deno.remove(path).catch(() => {});
  }
}

async function bursts(
  name: string,
  seconds: number,
  commit: (i: number) => Promise<number>,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let retries = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1_000) {
    await Promise.all(Array.from({ length: IN_FLIGHT }, async (_, i) => {
      const began = performance.now();
      retries += await commit(i);
      latencies.push(performance.now() - began);
    }));
  }
  const elapsed = (performance.now() - start) / 1_000;
  latencies.sort((x, y) => x - y);
  return {
    name,
    tool: "in process",
    requests: latencies.length,
    rps: latencies.length / elapsed,
    p50Ms: latencies[Math.floor(latencies.length * 0.5)],
    p99Ms: latencies[Math.floor(latencies.length * 0.99)],
    errors: retries,
  };
}

async function closeAll(...apps: TestApp[]): Promise<void> {
  for (const app of apps) await app.close();
}

import { assertEquals } from "./support/assertions.ts";
import { ManualClock } from "../lib/clock.ts";
import { RequestQuota } from "../lib/quota/request_quota.ts";
import { type RequestCounts, requestCountsKey, requestShardOf } from "../kv/request_counts.ts";
import { openKv } from "../kv/open_kv.ts";

/** `count` distinct project ids that all fall in shard 0. */
function idsOfOneShard(count: number): string[] {
  const ids: string[] = [];
  for (let i = 0; ids.length < count; i++) {
    if (requestShardOf(`p-${i}`) === 0) ids.push(`p-${i}`);
  }
  return ids;
}

Deno.test("RequestQuota splits a shard's waiting projects across commits within the store's limits", async () => {
  // Given 1,100 projects of one shard: one commit for all of them would pass 1,000 mutations
  await using kv = await openKv(":memory:");
  const quota = new RequestQuota(kv, new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0)));
  const ids = idsOfOneShard(1100);
  // When each counts two requests at once
  const verdicts = await Promise.all(ids.flatMap((id) => [quota.count(id), quota.count(id)]));
  // Then every request is answered and every count is exact
  assertEquals(verdicts.length, 2200);
  assertEquals(verdicts.filter((v) => v === "ok").length, 2200);
  const stored = [];
  for (let i = 0; i < ids.length; i += 10) {
    const entries = await kv.getMany<RequestCounts[]>(
      ids.slice(i, i + 10).map((id) => requestCountsKey(id)),
    );
    stored.push(...entries.map((e) => [e.value?.minuteCount, e.value?.dayCount]));
  }
  assertEquals(stored, ids.map(() => [2, 2]));
  await quota.close();
});

// A project paying now and then has its payout's request (step 2) and its places in the project's
// limits counted by the reservation's own commit (`lib/quota/quota_fold.ts`,
// `lib/tx/allowance/allowance_fold.ts`): exactly once, also when that commit's answer is lost and
// Deno's client sends it again, and a request over the quota through that path is refused, counted,
// and reserves nothing.
import assert from "node:assert/strict";
import { type RequestCounts, requestCountsKey } from "../../kv/request_counts.ts";
import { getBucketUsage } from "../../kv/tx_allowance.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { startRemoteStore } from "../support/remote_store.ts";
import { okJson, startTxHarness } from "../support/tx_harness.ts";

async function quietProject() {
  const store = await startRemoteStore();
  const h = await startTxHarness({ kvPath: store.url });
  await h.policy({ maxSolPerTransfer: "5" });
  await h.link(4);
  const pay = async (key: string) =>
    await h.a.post("transfer-sol", { to: { userId: 4 }, amount: "0.01", idempotencyKey: key });
  // What the project's request counters and its day's payout count hold.
  const counted = async () => {
    const projectId = h.project.id;
    const counts = (await h.a.kv.get<RequestCounts>(requestCountsKey(projectId))).value!;
    const day = await getBucketUsage(h.a.kv, projectId, "day", h.a.clock.now());
    return { requests: counts.dayCount, payouts: day.reduce((sum, b) => sum + b.n, 0n) };
  };
  return {
    store,
    h,
    pay,
    counted,
    async [Symbol.asyncDispose]() {
      await h[Symbol.asyncDispose]();
      await store[Symbol.asyncDispose]();
    },
  };
}

Deno.test("A quiet project's payout whose reservation answer is lost counts its request and its places once", async () => {
  // Given: a project that paid once a moment ago, over KV Connect
  await using p = await quietProject();
  await okJson(await p.pay("first"));
  const before = await p.counted();

  // When: its next payout's reservation commit applies and its answer is lost (the client's resend
  // of it then fails its checks)
  p.store.server.faults.unavailableAfterWriteTo = "tx_requests";
  const paid = await okJson(await p.pay("second"));

  // Then: it is paid, and counted once against the quota and once in the day's payouts
  assert.equal(p.store.server.faults.unavailableAfterWriteTo, null);
  assert.equal(paid.status, "confirmed");
  const after = await p.counted();
  assert.deepEqual(
    { requests: after.requests - before.requests, payouts: after.payouts - before.payouts },
    { requests: 1, payouts: 1n },
  );
});

Deno.test("A quiet project's payout over the minute's quota is refused, counted, and reserves nothing", async () => {
  // Given: a project that paid once, whose counters say this minute's 600 requests are used
  await using p = await quietProject();
  await okJson(await p.pay("first"));
  const now = p.h.a.clock.now();
  const key = requestCountsKey(p.h.project.id);
  const stored = (await p.h.a.kv.get<RequestCounts>(key)).value!;
  await p.h.a.kv.set(key, {
    ...stored,
    minute: Math.floor(now / 60_000),
    minuteCount: 600,
    day: Math.floor(now / 86_400_000),
  });
  const before = await p.counted();

  // When: it pays again
  const refused = await p.pay("over");

  // Then: 429 rate_limited, counted, and nothing reserved under the key
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).error.code, "rate_limited");
  const after = await p.counted();
  assert.deepEqual(
    { requests: after.requests - before.requests, payouts: after.payouts - before.payouts },
    { requests: 1, payouts: 0n },
  );
  assert.equal(await getTxRequest(p.h.a.kv, p.h.project.id, "over", now), null);
});

import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";
import { requestCountsKey } from "../../kv/request_counts.ts";

function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const s of statuses) counts[s] = (counts[s] ?? 0) + 1;
  return counts;
}

Deno.test("RequestQuota lets exactly 600 of 700 concurrent requests through in one minute", async () => {
  await using env = await createTestApp();
  const { apiKey } = await createTestProject(env);
  const responses = await Promise.all(
    Array.from({ length: 700 }, () => call(env.app, "/v1/players/1/wallet", { apiKey })),
  );
  const bodies = await Promise.all(responses.map((r) => r.json()));
  assert.deepEqual(tally(responses.map((r) => r.status)), { 200: 600, 429: 100 });
  assert.deepEqual(
    new Set(bodies.filter((b) => b.error).map((b) => b.error.code)),
    new Set(["rate_limited"]),
  );
  assert.deepEqual(
    responses.some((r) => [...r.headers.keys()].some((h) => h.includes("ratelimit"))),
    false,
  );
});

Deno.test("RequestQuota stays exact across two instances sharing one KV", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using a = await createTestApp({ kvPath: path });
  await using b = await createTestApp({ kvPath: path, clock: a.clock });
  const { apiKey } = await createTestProject(a);
  const responses = await Promise.all(
    Array.from(
      { length: 700 },
      (_, i) => call(i % 2 ? a.app : b.app, "/v1/players/1/wallet", { apiKey }),
    ),
  );
  await Promise.all(responses.map((r) => r.body?.cancel()));
  assert.deepEqual(tally(responses.map((r) => r.status)), { 200: 600, 429: 100 });
  await Deno.remove(path);
});

Deno.test("RequestQuota starts a new window each clock minute", async () => {
  await using env = await createTestApp();
  const { apiKey } = await createTestProject(env);
  const burst = () =>
    Promise.all(
      Array.from({ length: 601 }, () => call(env.app, "/v1/players/1/wallet", { apiKey })),
    );
  assert.deepEqual(tally((await burst()).map((r) => r.status)), { 200: 600, 429: 1 });
  env.clock.advance(60_000);
  assert.deepEqual(tally((await burst()).map((r) => r.status)), { 200: 600, 429: 1 });
});

Deno.test("RequestQuota answers daily_quota_exceeded once the UTC day's 100,000 are used", async () => {
  await using env = await createTestApp();
  const { project, apiKey } = await createTestProject(env);
  const day = Math.floor(env.clock.now() / 86_400_000);
  // Given 99,999 requests already counted today, in earlier minutes
  await env.kv.set(requestCountsKey(project.id), {
    minute: 0,
    minuteCount: 0,
    day,
    dayCount: 99_999,
  });
  // When two more arrive
  const first = await call(env.app, "/v1/project", { apiKey });
  const second = await call(env.app, "/v1/project", { apiKey });
  // Then the first is the last one allowed today
  assert.deepEqual(first.status, 200);
  await assertErrorCode(second, 429, "daily_quota_exceeded");
  // And a new UTC day starts afresh
  env.clock.set((day + 1) * 86_400_000);
  assert.deepEqual((await call(env.app, "/v1/project", { apiKey })).status, 200);
});

Deno.test("RequestQuota counts every keyed /v1 request whatever its answer, and never /health", async () => {
  await using env = await createTestApp();
  const { project, apiKey } = await createTestProject(env);
  await call(env.app, "/health");
  await call(env.app, "/v1/players/abc/wallet", { apiKey }); // 400
  await call(env.app, "/v1/players/wallets", { apiKey, method: "POST", body: "{" }); // 400
  await call(env.app, "/v1/players/wallets", {
    apiKey,
    method: "POST",
    json: { userIds: [1, 2, 3] },
  });
  await call(env.app, "/v1/project", { apiKey: "blk_live_" + "B".repeat(43) }); // unknown key
  const counts = (await env.kv.get<{ minuteCount: number; dayCount: number }>(
    requestCountsKey(project.id),
  )).value;
  assert.deepEqual([counts?.minuteCount, counts?.dayCount], [3, 3]);
});

Deno.test("RequestQuota counts projects separately", async () => {
  await using env = await createTestApp();
  const one = await createTestProject(env);
  const two = await createTestProject(env);
  const responses = await Promise.all(
    Array.from(
      { length: 1200 },
      (_, i) => call(env.app, "/v1/project", { apiKey: i % 2 ? one.apiKey : two.apiKey }),
    ),
  );
  await Promise.all(responses.map((r) => r.body?.cancel()));
  assert.deepEqual(tally(responses.map((r) => r.status)), { 200: 1200 });
});

Deno.test("RequestQuota stays exact when two instances take turns on many projects", async () => {
  // Given two instances that each remember what they last wrote
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using a = await createTestApp({ kvPath: path });
  await using b = await createTestApp({ kvPath: path, clock: a.clock });
  const projects = await Promise.all(
    Array.from({ length: 24 }, (_, i) => createTestProject(a, { developer: `dev-${i}` })),
  );
  // When they take turns, each burst landing on counters the other one just moved
  const passed = new Map<string, number>();
  for (let round = 0; round < 8; round++) {
    const app = round % 2 ? a.app : b.app;
    const burst = projects.flatMap(({ project, apiKey }) =>
      Array.from({ length: 80 }, async () => {
        const res = await call(app, "/v1/players/1/wallet", { apiKey });
        await res.body?.cancel();
        if (res.status === 200) passed.set(project.id, (passed.get(project.id) ?? 0) + 1);
      })
    );
    await Promise.all(burst);
  }
  // Then every project got exactly its 600 of the 640 it sent, and the store counted all 640
  for (const { project } of projects) {
    assert.deepEqual(passed.get(project.id), 600);
    const counts = (await a.kv.get<{ minuteCount: number; dayCount: number }>(
      requestCountsKey(project.id),
    )).value;
    assert.deepEqual([counts?.minuteCount, counts?.dayCount], [640, 640]);
  }
  await Deno.remove(path);
});

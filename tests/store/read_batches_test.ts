import assert from "node:assert/strict";
import { BatchedReads, requestReader } from "../../kv/read_batches.ts";
import { linkWallet } from "../../kv/links.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";

const WALLET = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

/** An in-memory store and its batched reads, counting the `getMany` calls that reach it. */
async function batchedStore(): Promise<{ kv: Deno.Kv; reads: BatchedReads; calls: () => number }> {
  const kv = await Deno.openKv(":memory:");
  let calls = 0;
  const getMany = kv.getMany.bind(kv);
  kv.getMany = ((keys: Deno.KvKey[]) => {
    calls++;
    return getMany(keys);
  }) as Deno.Kv["getMany"];
  return { kv, reads: new BatchedReads(kv), calls: () => calls };
}

Deno.test("Reads asked for in one turn share one store call per ten keys", async () => {
  const { kv, reads, calls } = await batchedStore();
  using _ = kv;
  for (let i = 0; i < 25; i++) await kv.set(["n", i], i * 2);
  const before = calls();
  const entries = await Promise.all(Array.from({ length: 25 }, (_, i) => reads.get(["n", i])));
  assert.deepEqual(entries.map((e) => e.value), Array.from({ length: 25 }, (_, i) => i * 2));
  assert.ok(entries.every((e) => e.versionstamp !== null));
  // 10 + 10 in two calls; the last five share a third.
  assert.equal(calls() - before, 3);
});

Deno.test("A batched read sees every write committed before it was asked", async () => {
  const { kv, reads } = await batchedStore();
  using _ = kv;
  await kv.set(["k"], "old");
  const first = reads.get(["k"]);
  assert.equal((await first).value, "old");
  await kv.set(["k"], "new");
  const [again, missing] = await Promise.all([reads.get(["k"]), reads.get(["absent"])]);
  assert.equal(again.value, "new");
  assert.deepEqual([missing.value, missing.versionstamp], [null, null]);
});

Deno.test("A bad key fails only its own read in a batch", async () => {
  const { kv, reads } = await batchedStore();
  using _ = kv;
  await kv.set(["ok"], 1);
  const asked = [reads.get(["ok"]), reads.get(["x".repeat(3_000)]), reads.get(["ok"])];
  const settled = await Promise.allSettled(asked);
  assert.deepEqual(settled.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
  const values = settled.map((r) => r.status === "fulfilled" ? r.value.value : String(r.reason));
  assert.equal(values[0], 1);
  assert.match(String(values[1]), /[Kk]ey too large/);
  assert.equal(values[2], 1);
});

Deno.test("The request paths read through the batches on a local file, through the store itself over the network", async () => {
  using kv = await Deno.openKv(":memory:");
  assert.ok(requestReader(kv, { remote: false }) instanceof BatchedReads);
  assert.equal(requestReader(kv, { remote: true }), kv);
});

Deno.test("GET /v1/players/:userId/wallet reads through the batches: 64 requests at once make a few store reads, not 64", async () => {
  // Given: 64 projects, each with a key and player 1 linked, their keys already resolved.
  await using t = await createTestApp();
  const keys: string[] = [];
  for (let i = 0; i < 64; i++) {
    const { project, apiKey } = await createTestProject(t, { developer: `Dev${i}` });
    await linkWallet(t.kv, project.id, { userId: 1, address: WALLET, now: 1 });
    keys.push(apiKey);
  }
  const wave = () =>
    Promise.all(keys.map(async (apiKey) => {
      const res = await call(t.app, "/v1/players/1/wallet", { apiKey });
      assert.equal((await res.json()).address, WALLET);
    }));
  await wave();

  // When: one request per project arrives at once, the store's point reads counted.
  const get = t.kv.get;
  let gets = 0;
  t.kv.get = ((...args: Parameters<Deno.Kv["get"]>) => {
    gets++;
    return get(...args);
  }) as Deno.Kv["get"];
  try {
    await wave();
  } finally {
    t.kv.get = get;
  }

  // Then: the 64 link reads went out in `getMany` batches, not one `get` each.
  assert.ok(gets < 8, `${gets} store gets for 64 requests`);
});

Deno.test("getMany of several requests in one turn share the store calls, each answered in its order", async () => {
  const { kv, reads, calls } = await batchedStore();
  using _ = kv;
  for (let i = 0; i < 12; i++) await kv.set(["n", i], i);
  const before = calls();
  // When: three reads of four keys each (one key absent) in one turn
  const answers = await Promise.all(
    [0, 4, 8].map((from) =>
      reads.getMany([["n", from], ["n", from + 1], ["absent", from], ["n", from + 3]])
    ),
  );
  // Then: each in its keys' order, from 12 keys in two calls (10 + 2) instead of three
  assert.deepEqual(
    answers.map((entries) => entries.map((e) => e.value)),
    [[0, 1, null, 3], [4, 5, null, 7], [8, 9, null, 11]],
  );
  assert.equal(calls() - before, 2);
});

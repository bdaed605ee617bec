import assert from "node:assert/strict";
import { batchGets } from "../../kv/read_batches.ts";

/** An in-memory store with batched gets, counting the `getMany` calls that reach it. */
async function batchedStore(): Promise<{ kv: Deno.Kv; calls: () => number }> {
  const kv = await Deno.openKv(":memory:");
  let calls = 0;
  const getMany = kv.getMany.bind(kv);
  kv.getMany = ((keys: Deno.KvKey[]) => {
    calls++;
    return getMany(keys);
  }) as Deno.Kv["getMany"];
  batchGets(kv);
  return { kv, calls: () => calls };
}

Deno.test("Reads asked for in one turn share one store call per ten keys", async () => {
  const { kv, calls } = await batchedStore();
  using _ = kv;
  for (let i = 0; i < 25; i++) await kv.set(["n", i], i * 2);
  const before = calls();
  const entries = await Promise.all(Array.from({ length: 25 }, (_, i) => kv.get(["n", i])));
  assert.deepEqual(entries.map((e) => e.value), Array.from({ length: 25 }, (_, i) => i * 2));
  assert.ok(entries.every((e) => e.versionstamp !== null));
  // 10 + 10 in two calls; the last five share a third.
  assert.equal(calls() - before, 3);
});

Deno.test("A batched read sees every write committed before it was asked", async () => {
  const { kv } = await batchedStore();
  using _ = kv;
  await kv.set(["k"], "old");
  const first = kv.get(["k"]);
  assert.equal((await first).value, "old");
  await kv.set(["k"], "new");
  const [again, missing] = await Promise.all([kv.get(["k"]), kv.get(["absent"])]);
  assert.equal(again.value, "new");
  assert.deepEqual([missing.value, missing.versionstamp], [null, null]);
});

Deno.test("A bad key fails only its own read in a batch", async () => {
  const { kv } = await batchedStore();
  using _ = kv;
  await kv.set(["ok"], 1);
  const reads = [kv.get(["ok"]), kv.get(["x".repeat(3_000)]), kv.get(["ok"])];
  const settled = await Promise.allSettled(reads);
  assert.deepEqual(settled.map((r) => r.status), ["fulfilled", "rejected", "fulfilled"]);
  const values = settled.map((r) => r.status === "fulfilled" ? r.value.value : String(r.reason));
  assert.equal(values[0], 1);
  assert.match(String(values[1]), /[Kk]ey too large/);
  assert.equal(values[2], 1);
});

Deno.test("A read with options goes to the store at once, alone", async () => {
  const { kv, calls } = await batchedStore();
  using _ = kv;
  await kv.set(["e"], "v");
  const before = calls();
  assert.equal((await kv.get(["e"], { consistency: "eventual" })).value, "v");
  assert.equal(calls(), before);
});

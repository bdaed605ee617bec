import assert from "node:assert/strict";
import { startMemoryStoreStandIn } from "../../sandbox/roblox/memory_store.ts";

/** The fields the stand-in's answers use. */
interface Answer {
  error?: string;
  value?: string | null;
  version?: number;
  conflict?: boolean;
  values?: string[];
  readId?: string | null;
  items?: Array<{ key: string }>;
}

async function call(url: string, path: string, body: unknown): Promise<[number, Answer]> {
  const res = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return [res.status, await res.json()];
}

Deno.test("The memory store stand-in refuses past the game's request units, as Roblox does", async () => {
  let clock = 1_700_000_000_000;
  const store = await startMemoryStoreStandIn({ now: () => clock });
  try {
    // 0 users: 1,000 units in any 60 seconds.
    for (let i = 0; i < 1_000; i++) {
      const [status] = await call(store.url, "/sorted-maps/m/get", { key: "k" });
      assert.equal(status, 200);
    }
    assert.deepEqual(await call(store.url, "/sorted-maps/m/get", { key: "k" }), [
      429,
      { error: "TotalRequestsOverLimit" },
    ]);
    clock += 60_000;
    store.setUsers(10);
    assert.equal((await call(store.url, "/sorted-maps/m/get", { key: "k" }))[0], 200);
    const usage = store.usage();
    assert.equal(usage.unitsPerMinuteLimit, 2_200);
    assert.deepEqual(usage.refused, { TotalRequestsOverLimit: 1 });
  } finally {
    await store.close();
  }
});

Deno.test("The memory store stand-in refuses a write past the game's memory and keeps the peak", async () => {
  const store = await startMemoryStoreStandIn();
  try {
    // 64 KB for 0 users: two 30 KB values fit, a third does not.
    const value = JSON.stringify("x".repeat(30 * 1_024));
    for (const key of ["a", "b"]) {
      const [status] = await call(store.url, "/sorted-maps/m/set", { key, value, expiration: 60 });
      assert.equal(status, 200);
    }
    assert.deepEqual(
      await call(store.url, "/sorted-maps/m/set", { key: "c", value, expiration: 60 }),
      [429, { error: "TotalMemoryOverLimit" }],
    );
    assert.deepEqual(
      await call(store.url, "/sorted-maps/m/set", {
        key: "d",
        value: JSON.stringify("x".repeat(33 * 1_024)),
        expiration: 60,
      }),
      [429, { error: "ItemValueSizeTooLarge" }],
    );
    await call(store.url, "/sorted-maps/m/remove", { key: "a" });
    const usage = store.usage();
    assert.ok(usage.memoryBytes < usage.peakMemoryBytes, JSON.stringify(usage));
  } finally {
    await store.close();
  }
});

Deno.test("A sorted-map write carrying the version read is refused when the item changed meanwhile", async () => {
  const store = await startMemoryStoreStandIn();
  try {
    const [, absent] = await call(store.url, "/sorted-maps/m/get", { key: "k" });
    assert.deepEqual(absent, { value: null });
    const write = (value: string, version: number) =>
      call(store.url, "/sorted-maps/m/set", { key: "k", value, expiration: 60, version });
    assert.deepEqual((await write('"first"', 0))[1], { conflict: false });
    // A second writer that also read "absent" loses, and reads again.
    assert.deepEqual((await write('"second"', 0))[1], { conflict: true });
    const [, current] = await call(store.url, "/sorted-maps/m/get", { key: "k" });
    assert.equal(current.value, '"first"');
    assert.deepEqual((await write('"second"', current.version!))[1], { conflict: false });
  } finally {
    await store.close();
  }
});

Deno.test("A queue read hides its items until removed; unremoved ones come back after the invisibility timeout", async () => {
  let clock = 1_700_000_000_000;
  const store = await startMemoryStoreStandIn({ now: () => clock });
  try {
    for (const value of ["1", "2", "3"]) {
      await call(store.url, "/queues/q/add", { value, expiration: 60 });
    }
    const read = (count: number) =>
      call(store.url, "/queues/q/read", { count, invisibilitySeconds: 30 });
    const [, first] = await read(2);
    assert.deepEqual(first.values, ["1", "2"]);
    const [, second] = await read(2);
    assert.deepEqual(second.values, ["3"]);
    await call(store.url, "/queues/q/remove", { readId: second.readId });
    assert.deepEqual((await read(2))[1], { values: [], readId: null });
    clock += 31_000;
    // The first read was never removed: its items are there again, at least once.
    assert.deepEqual((await read(5))[1].values, ["1", "2"]);
    // A range costs a unit per item it returns.
    for (const key of ["x", "y", "z"]) {
      await call(store.url, "/sorted-maps/r/set", { key, value: "1", expiration: 60 });
    }
    const before = store.usage().unitsByMinute.reduce((n, m) => n + m.units, 0);
    const [, range] = await call(store.url, "/sorted-maps/r/range", {
      direction: "Descending",
      count: 2,
    });
    assert.deepEqual(range.items?.map((item) => item.key), ["z", "y"]);
    assert.equal(store.usage().unitsByMinute.reduce((n, m) => n + m.units, 0) - before, 2);
  } finally {
    await store.close();
  }
});

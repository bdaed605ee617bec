// The read cache is bounded by memory, not only by entry count, and lets expired entries go.
import assert from "node:assert/strict";
import { ManualClock } from "../../core/clock.ts";
import { TtlCache } from "../../core/ttl_cache.ts";

Deno.test("TtlCache drops expired entries instead of keeping them until it is full", async () => {
  const clock = new ManualClock();
  const cache = new TtlCache<string>(clock, { ttlMs: 1_000 });
  for (let i = 0; i < 100; i++) await cache.get(`k${i}`, () => Promise.resolve("v"));
  assert.deepEqual(cache.size, 100);
  clock.advance(1_000);
  await cache.get("fresh", () => Promise.resolve("v"));
  assert.deepEqual(cache.size, 1);
});

Deno.test("TtlCache stays within its byte budget, evicting the oldest entries", async () => {
  const cache = new TtlCache<{ text: string }>(new ManualClock(), { maxBytes: 1_000_000 });
  // 100 answers of about 200 KB each: 20 MB if all were kept.
  for (let i = 0; i < 100; i++) {
    await cache.get(`k${i}`, () => Promise.resolve({ text: `${i}`.padEnd(100_000, "x") }));
  }
  assert.ok(cache.bytes <= 1_000_000, `${cache.bytes} bytes held`);
  assert.ok(cache.size >= 4 && cache.size <= 5, `${cache.size} entries`);
  // The newest entry is still served from the cache.
  let loads = 0;
  await cache.get("k99", () => Promise.resolve({ text: `${loads++}` }));
  assert.deepEqual(loads, 0);
});

Deno.test("TtlCache does not keep a value larger than its whole budget", async () => {
  const cache = new TtlCache<string>(new ManualClock(), { maxBytes: 10_000 });
  const value = await cache.get("big", () => Promise.resolve("x".repeat(20_000)));
  assert.deepEqual(value.length, 20_000);
  assert.deepEqual(cache.size, 0);
  assert.deepEqual(cache.bytes, 0);
});

Deno.test("TtlCache answers an entry past its refresh age at once and loads it again behind the answer", async () => {
  const clock = new ManualClock();
  const cache = new TtlCache<string>(clock, { ttlMs: 10_000, refreshAfterMs: 5_000 });
  let loads = 0;
  const load = () => Promise.resolve(`v${++loads}`);
  assert.equal(await cache.get("k", load), "v1");

  clock.advance(4_999);
  assert.equal(await cache.get("k", load), "v1");
  assert.equal(loads, 1, "not refreshed before its refresh age");

  clock.advance(1);
  assert.equal(await cache.get("k", load), "v1", "answered as held");
  await Promise.resolve();
  assert.equal(loads, 2, "loaded again behind the answer");
  assert.equal(await cache.get("k", load), "v2");

  clock.advance(10_000);
  assert.equal(await cache.get("k", load), "v3", "never older than its lifetime");
});

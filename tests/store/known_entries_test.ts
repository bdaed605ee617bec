import assert from "node:assert/strict";
import { KnownEntries } from "../../kv/known_entries.ts";

const KEY = ["counters", "p1"];
const OTHER = ["counters", "p2"];

Deno.test("KnownEntries answers only when every key asked is known", () => {
  const known = new KnownEntries();
  known.remember([{ key: KEY, value: { n: 1 }, versionstamp: "00000000000000010000" }]);

  assert.equal(known.entries([KEY, OTHER]), null);
  assert.deepEqual(known.entries([KEY]), [
    { key: KEY, value: { n: 1 }, versionstamp: "00000000000000010000" },
  ]);
});

Deno.test("KnownEntries keeps a newer version over an older read that finished later", () => {
  const known = new KnownEntries();
  known.remember([{ key: KEY, value: { n: 2 }, versionstamp: "00000000000000020000" }]);
  known.remember([{ key: KEY, value: { n: 1 }, versionstamp: "00000000000000010000" }]);

  assert.deepEqual(known.entries([KEY])?.[0]?.value, { n: 2 });
  assert.equal(known.entries([KEY])?.[0]?.versionstamp, "00000000000000020000");
});

Deno.test("KnownEntries forgets a key forgotten on purpose, and only that one", () => {
  const known = new KnownEntries();
  const entry = (key: Deno.KvKey) => ({ key, value: 1, versionstamp: "00000000000000010000" });
  known.remember([entry(KEY), entry(OTHER)]);

  known.forget([KEY]);

  assert.equal(known.entries([KEY]), null);
  assert.notEqual(known.entries([OTHER]), null);
});

Deno.test("KnownEntries' values cannot be changed, by the caller who wrote them or one who reads them", () => {
  const known = new KnownEntries();
  const written = { buckets: [{ n: 1 }] };
  known.remember([{ key: KEY, value: written, versionstamp: "00000000000000010000" }]);
  written.buckets[0]!.n = 99;

  const [entry] = known.entries([KEY])!;
  const value = entry!.value as { buckets: { n: number }[] };
  assert.equal(value.buckets[0]!.n, 1);
  assert.throws(() => {
    value.buckets[0]!.n = 2;
  }, TypeError);
  assert.throws(() => value.buckets.push({ n: 3 }), TypeError);
});

Deno.test("KnownEntries keeps big integers and byte arrays as written, copied", () => {
  const known = new KnownEntries();
  const written = { n: 7n, bytes: new Uint8Array([1, 2]), times: [1, 2] };
  known.remember([{ key: KEY, value: written, versionstamp: "00000000000000010000" }]);
  written.bytes[0] = 9;
  written.times.push(3);

  const [entry] = known.entries([KEY])!;
  assert.deepEqual(entry!.value, { n: 7n, bytes: new Uint8Array([1, 2]), times: [1, 2] });
});

Deno.test("KnownEntries gives way to the least recently used keys past its bound", () => {
  const known = new KnownEntries({ keys: 2, bytes: 1_000_000 });
  const entry = (key: Deno.KvKey) => ({ key, value: 1, versionstamp: "00000000000000010000" });
  known.remember([entry(["a"]), entry(["b"])]);
  known.entries([["a"]]);
  known.remember([entry(["c"])]);

  assert.notEqual(known.entries([["a"]]), null);
  assert.equal(known.entries([["b"]]), null);
  assert.notEqual(known.entries([["c"]]), null);
});

Deno.test("KnownEntries gives way to the least recently used keys past its bytes", () => {
  // Room for two such lists (about 30 KB each as the heap holds them), not three.
  const known = new KnownEntries({ keys: 100, bytes: 70_000 });
  const list = (key: Deno.KvKey) => ({
    key,
    value: { times: Array<number>(1_000).fill(1) },
    versionstamp: "00000000000000010000",
  });
  known.remember([list(["a"]), list(["b"])]);
  assert.notEqual(known.entries([["a"]]), null);
  known.remember([list(["c"])]);

  assert.notEqual(known.entries([["a"]]), null);
  assert.equal(known.entries([["b"]]), null);
  assert.notEqual(known.entries([["c"]]), null);
});

// The bounds `kv/open_kv.ts` sends commits and reads by over KV Connect (`kv/call_sizes.ts`),
// against the bodies Deno's client actually sends to the stand-in, and what the service does with
// them: a commit that may reach the 1,024 bytes at which the client holds a body back goes behind
// a prompt, any other at once.
import assert from "node:assert/strict";
import { openKv } from "../../kv/open_kv.ts";
import {
  checkBytes,
  HELD_BODY_BYTES,
  mutationBytes,
  readBytes,
  valueBytes,
} from "../../kv/call_sizes.ts";
import type { DataPathCall } from "../../sandbox/kv_connect/server.ts";
import { startRemoteStore } from "../support/remote_store.ts";

const big = new Uint8Array(4096).fill(7);
// Values of every shape the service stores, and some it does not.
const VALUES: Record<string, unknown> = {
  record: {
    id: "01M8HY4519V57GEJ87754VVWGA",
    status: "submitted",
    attempt: 3,
    amount: 1_500_000_000n,
    ratio: 0.25,
    recipient: null,
    done: false,
    steps: [1, 2, 3, "four", { five: 5 }],
    at: new Date(0),
  },
  unicode: { name: "Obby Rush 🚀 – 跑酷", note: "é".repeat(40) },
  huge: 2n ** 300n,
  negative: -(2n ** 70n),
  bytes: new Uint8Array(600).fill(1),
  nestedBytes: { signed: new Uint8Array(300).fill(2), view: big.subarray(0, 10) },
  map: new Map<string, unknown>([["a", 1], ["b", [true, null]]]),
  set: new Set(["x", "y", 3]),
  many: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`field${i}`, i * 1_000_003])),
  text: "a".repeat(900),
  sparse: [1, , 3],
  counter: new Deno.KvU64(42n),
};
const KEYS: Deno.KvKey[] = [
  ["plain", "01M8HY4519V57GEJ87754VVWGA", "key"],
  ["numbers", 1, 2.5, -7, 10n, 2n ** 90n, true, false],
  ["bytes", new Uint8Array([0, 1, 0, 2, 0])],
  ["nul\u0000inside", "ünïcödé 🚀"],
];

async function traced<T>(
  store: { server: { trace: DataPathCall[] | null } },
  run: () => Promise<T>,
) {
  const calls: DataPathCall[] = [];
  store.server.trace = calls;
  await run();
  store.server.trace = null;
  return calls;
}

Deno.test("The bounds of a commit's and a read's body hold for every kind of key and value, and stay near it", async () => {
  await using store = await startRemoteStore();
  using kv = await Deno.openKv(store.url);
  for (const key of KEYS) {
    for (const [name, value] of Object.entries(VALUES)) {
      const entry = await kv.get(key);
      const calls = await traced(store, () => kv.atomic().check(entry).set(key, value).commit());
      const sent = calls.find((c) => c.kind === "write")!.bytes;
      const bound = checkBytes(key) + mutationBytes(key, valueBytes(value));
      assert.ok(bound >= sent, `${name} under ${String(key[0])}: bound ${bound}, sent ${sent}`);
      assert.ok(
        bound <= 1.35 * sent,
        `${name} under ${String(key[0])}: ${bound} for ${sent}`,
      );
    }
    const calls = await traced(
      store,
      () => kv.atomic().delete(key).sum(["sum", ...key], 1n).commit(),
    );
    const bound = mutationBytes(key, 0) + mutationBytes(["sum", ...key], 8);
    assert.ok(
      bound >= calls[0]!.bytes,
      `delete and sum: bound ${bound}, sent ${calls[0]!.bytes}`,
    );
    const read = await traced(store, () => kv.getMany(KEYS));
    const readBound = KEYS.reduce((sum, k) => sum + readBytes(k), 0);
    assert.ok(readBound >= read[0]!.bytes, `read: bound ${readBound}, sent ${read[0]!.bytes}`);
  }
});

Deno.test("Over KV Connect, a commit that may reach 1,024 bytes goes out behind a prompt, and a smaller one at once", async () => {
  await using store = await startRemoteStore();
  using kv = await openKv(store.url);
  // Given: a value whose commit stays under the bodies held back, and one that does not
  const small = { note: "a".repeat(600) };
  const large = { note: "a".repeat(1_200) };
  assert.ok(mutationBytes(["small"], valueBytes(small)) < HELD_BODY_BYTES);
  // When: each is committed through the service's store handle
  const calls = await traced(store, async () => {
    await kv.atomic().set(["small"], small).commit();
    await kv.atomic().set(["large"], large).commit();
  });
  const prompts = (write: string) => {
    const at = calls.findIndex((c) => c.kind === "write" && c.keys[0] === write);
    return calls.slice(0, at).filter((c) => c.keys[0] === "commit_prompt").length;
  };
  // Then: the small commit made no prompt read; the large one made one, before it
  assert.deepEqual(prompts("small"), 0, JSON.stringify(calls));
  assert.deepEqual(prompts("large"), 1, JSON.stringify(calls));
});

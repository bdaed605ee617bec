import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { openKv } from "../../kv/open_kv.ts";

// Deno KV gives up on a locked SQLite file after 5 s ("database is locked"); the lock is held longer.
const LOCK_MS = 5_300;

/** Holds an exclusive lock on the store's file from another connection for `ms`, as a second process writing would. */
function lockFile(path: string, ms: number): Promise<void> {
  const db = new DatabaseSync(path);
  db.exec("BEGIN EXCLUSIVE");
  return new Promise((resolve) =>
    setTimeout(() => {
      db.exec("COMMIT");
      db.close();
      resolve();
    }, ms)
  );
}

Deno.test("A local store's reads and writes wait out another connection's lock", async () => {
  const path = `${await Deno.makeTempDir()}/locked.kv`;
  using kv = await openKv(path);
  await kv.set(["n"], 1);
  const released = lockFile(path, LOCK_MS);
  const started = performance.now();
  const [set, commit] = await Promise.all([
    kv.set(["n"], 2),
    kv.atomic().set(["m"], 3).commit(),
  ]);
  assert.ok(performance.now() - started >= LOCK_MS - 100, "the writes waited for the lock");
  assert.ok(set.ok && commit.ok);
  await released;
  assert.deepEqual((await kv.getMany([["n"], ["m"]])).map((e) => e.value), [2, 3]);
});

Deno.test("A local store passes on every error that is not a lock at once", async () => {
  using kv = await openKv(`${await Deno.makeTempDir()}/plain.kv`);
  const started = performance.now();
  await assert.rejects(kv.set(["big"], "x".repeat(70_000)), /Value too large/);
  await assert.rejects(kv.getMany(Array.from({ length: 11 }, (_, i) => [i])), /Too many ranges/);
  assert.ok(performance.now() - started < 1_000, "no retry");
});

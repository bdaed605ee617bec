import assert from "node:assert/strict";
import { KeyedLock } from "../../core/keyed_lock.ts";

Deno.test("KeyedLock.run() runs one task at a time per key, keys apart, and a failure frees the key", async () => {
  const lock = new KeyedLock();
  const log: string[] = [];
  const gate = Promise.withResolvers<void>();
  const task = (name: string, wait?: Promise<void>) => async () => {
    log.push(`${name} start`);
    await wait;
    log.push(`${name} end`);
    return name;
  };

  // Given a held task on key "a"
  const first = lock.run("a", task("a1", gate.promise));
  const failing = lock.run("a", () => Promise.reject(new Error("boom")));
  const third = lock.run("a", task("a2"));
  const other = lock.run("b", task("b1"));

  // Then "b" runs at once while "a" waits for its first task
  assert.equal(await other, "b1");
  assert.deepEqual(log, ["a1 start", "b1 start", "b1 end"]);
  gate.resolve();
  assert.equal(await first, "a1");
  await assert.rejects(failing, /boom/);
  assert.equal(await third, "a2");
  assert.deepEqual(log, ["a1 start", "b1 start", "b1 end", "a1 end", "a2 start", "a2 end"]);
});

Deno.test("KeyedLock.run() with a signal gives up waiting for its turn when it aborts, and the queue goes on", async () => {
  const lock = new KeyedLock();
  const gate = Promise.withResolvers<void>();
  const ran: string[] = [];
  // Given a held task, a waiter with a signal, and one after it
  const first = lock.run("a", async () => {
    await gate.promise;
    ran.push("first");
  });
  const giveUp = new AbortController();
  const waiting = lock.run("a", () => {
    ran.push("gave up");
    return Promise.resolve();
  }, { signal: giveUp.signal });
  const last = lock.run("a", () => {
    ran.push("last");
    return Promise.resolve();
  });

  // When the signal aborts while the first task still holds the key
  giveUp.abort(new Error("deadline"));

  // Then the waiter rejects at once and never runs; the last one runs after the first
  await assert.rejects(waiting, /deadline/);
  gate.resolve();
  await Promise.all([first, last]);
  assert.deepEqual(ran, ["first", "last"]);
});

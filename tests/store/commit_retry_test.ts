import assert from "node:assert/strict";
import { CommitConflictError, commitWithRetry, RETRY } from "../../core/commit_retry.ts";

Deno.test("commitWithRetry() runs a lost round again on fresh reads and answers the first result", async () => {
  // Given: a counter that another writer bumps between our read and our commit, twice.
  await using kv = await Deno.openKv(":memory:");
  await kv.set(["n"], 0);
  let interruptions = 2;

  // When
  const result = await commitWithRetry("bump n", async (round) => {
    const entry = await kv.get<number>(["n"]);
    if (interruptions-- > 0) await kv.set(["n"], entry.value! + 10);
    const ok = (await kv.atomic().check(entry).set(["n"], entry.value! + 1).commit()).ok;
    return ok ? { round, value: entry.value! + 1 } : RETRY;
  });

  // Then: the third round won, counting on the other writer's two changes.
  assert.deepEqual(result, { round: 2, value: 21 });
  assert.equal((await kv.get(["n"])).value, 21);
});

Deno.test("commitWithRetry() ends in CommitConflictError after its rounds", async () => {
  let rounds = 0;
  const error = await commitWithRetry("create project", () => {
    rounds++;
    return Promise.resolve(RETRY);
  }, { rounds: 5 }).catch((e) => e);
  assert.ok(error instanceof CommitConflictError);
  assert.equal(error.message, "Cannot create project: too many concurrent changes");
  assert.equal(rounds, 5);
});

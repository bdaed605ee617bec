import assert from "node:assert/strict";
import { commitGroups } from "../../kv/commit_groups.ts";
import { countCommits } from "../support/commit_counts.ts";

/** Runs `then` on a fresh store file, its handle counting the commits that reach it. */
async function withCountedStore(
  then: (store: { kv: Deno.Kv; commits: () => number }) => Promise<void>,
): Promise<void> {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const kv = await Deno.openKv(path);
  const counts = countCommits(kv);
  try {
    await then({ kv, commits: counts.made });
  } finally {
    kv.close();
    await Deno.remove(path);
  }
}

/** A checked increment of counter `key`, as the money path's commits are: read, check, write. */
async function increment(
  kv: Deno.Kv,
  committer: ReturnType<typeof commitGroups>,
  key: Deno.KvKey,
): Promise<number> {
  for (let round = 1;; round++) {
    const entry = await kv.get<number>(key);
    const op = committer.atomic().check(entry).set(key, (entry.value ?? 0) + 1);
    if ((await op.commit()).ok) return round;
  }
}

Deno.test("Commits asked for while one is in flight go out together, each applied whole", async () => {
  await withCountedStore(async ({ kv, commits }) => {
    const committer = commitGroups(kv, { remote: false });
    // When: 60 checked increments of 60 distinct counters at once
    await Promise.all(Array.from({ length: 60 }, (_, i) => increment(kv, committer, ["c", i])));
    // Then: every one applied, in far fewer commits
    const values = await Promise.all(Array.from({ length: 60 }, (_, i) => kv.get(["c", i])));
    assert.deepEqual(values.map((e) => e.value), Array(60).fill(1));
    assert.ok(commits() <= 10, `${commits()} commits for 60`);
    // And each key written by a group carries that group's versionstamp
    assert.ok(values.every((e) => e.versionstamp !== null));
  });
});

Deno.test("Commits on one key never share a group: none is lost, each loser is told and retries", async () => {
  await withCountedStore(async ({ kv }) => {
    const committer = commitGroups(kv, { remote: false });
    // When: 40 checked increments of one counter at once, beside 40 of distinct ones
    const rounds = await Promise.all([
      ...Array.from({ length: 40 }, () => increment(kv, committer, ["shared"])),
      ...Array.from({ length: 40 }, (_, i) => increment(kv, committer, ["own", i])),
    ]);
    // Then: the shared counter counts all 40 (a lost write would count fewer)
    assert.equal((await kv.get(["shared"])).value, 40);
    // And the increments that lost a check retried (told so), as without groups
    assert.ok(rounds.slice(0, 40).some((round) => round > 1));
  });
});

Deno.test("A group that fails one check: only that commit fails, the others apply", async () => {
  await withCountedStore(async ({ kv }) => {
    const committer = commitGroups(kv, { remote: false });
    const stale = await kv.get(["stale"]);
    await kv.set(["stale"], "changed");
    // When: in one turn, three commits, the second checked against a value changed since
    const results = await Promise.all([
      committer.atomic().set(["a"], 1).commit(),
      committer.atomic().check(stale).set(["stale"], "mine").commit(),
      committer.atomic().set(["b"], 2).commit(),
    ]);
    // Then
    assert.deepEqual(results.map((r) => r.ok), [true, false, true]);
    assert.equal((await kv.get(["stale"])).value, "changed");
    assert.deepEqual([(await kv.get(["a"])).value, (await kv.get(["b"])).value], [1, 2]);
  });
});

Deno.test("A group that fails one check costs one commit more, not one for each of its commits", async () => {
  await withCountedStore(async ({ kv, commits }) => {
    const committer = commitGroups(kv, { remote: false });
    const stale = await kv.get(["stale"]);
    await kv.set(["stale"], "changed");
    // When: in one turn, 20 checked commits, the 10th checked against a value changed since
    const fresh = await Promise.all(Array.from({ length: 20 }, (_, i) => kv.get(["k", i])));
    const results = await Promise.all(fresh.map((entry, i) => {
      const op = committer.atomic();
      return (i === 9 ? op.check(stale).set(["stale"], "mine") : op.check(entry).set(entry.key, i))
        .commit();
    }));
    // Then: only the stale one lost, and the others applied in a second group commit
    assert.deepEqual(results.map((r) => r.ok), Array.from({ length: 20 }, (_, i) => i !== 9));
    assert.equal((await kv.get(["stale"])).value, "changed");
    assert.equal((await kv.get(["k", 19])).value, 19);
    assert.equal(commits(), 2);
  });
});

Deno.test("A commit the store refuses throws for itself alone; sums and expiry keep their meaning", async () => {
  await withCountedStore(async ({ kv }) => {
    const committer = commitGroups(kv, { remote: false });
    // When: in one turn, a value over the store's 64 KiB limit beside two valid commits
    const outcomes = await Promise.allSettled([
      committer.atomic().sum(["n"], 5n).commit(),
      committer.atomic().set(["big"], "x".repeat(70_000)).commit(),
      committer.atomic().set(["gone"], 1, { expireIn: 1 }).commit(),
    ]);
    // Then
    assert.deepEqual(outcomes.map((o) => o.status), ["fulfilled", "rejected", "fulfilled"]);
    assert.equal((await kv.get<Deno.KvU64>(["n"])).value?.value, 5n);
    assert.equal((await kv.get(["big"])).value, null);
  });
});

Deno.test("A remote store's commits are made alone", async () => {
  await withCountedStore(async ({ kv, commits }) => {
    const committer = commitGroups(kv, { remote: true });
    await Promise.all(Array.from({ length: 5 }, (_, i) => increment(kv, committer, ["r", i])));
    assert.equal(commits(), 5);
  });
});

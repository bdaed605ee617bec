// A player's rewards (`GET /v1/players/{userId}/rewards`): the newest 100, newest first, those of
// one millisecond by key; a page reads the store's index only as far as what it answers, however
// many rewards the player has (issue 41's gaps, item 4).
import assert from "node:assert/strict";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";
import { putReward, rewardRecord } from "../support/rewards.ts";
import { countListings } from "../support/list_counts.ts";

Deno.test("A player's reward list answers the newest 100 and reads no more of the player's index", async () => {
  await using t = await createTestApp();
  const { project, apiKey } = await createTestProject(t);
  const now = t.clock.now();
  // Given player 1002 has 300 rewards, granted five to a millisecond (keys out of time order),
  // and another player has one
  const keys: Array<{ key: string; createdAt: number }> = [];
  for (let i = 0; i < 300; i++) {
    const key = `round-${String((i * 7919) % 1000).padStart(3, "0")}`;
    const createdAt = now - 1_000 + Math.floor(i / 5);
    keys.push({ key, createdAt });
    await putReward(t.kv, project.id, rewardRecord({ key, createdAt }, now));
  }
  await putReward(t.kv, project.id, rewardRecord({ key: "other", userId: 7, createdAt: now }, now));
  const reads = countListings(t.kv, (part) => String(part).includes("rewards"));

  // When the game lists their rewards
  const response = await call(t.app, "/v1/players/1002/rewards", { apiKey });
  const body = await response.json();

  // Then it answers the newest 100: newest first, a millisecond's by key
  assert.equal(response.status, 200, JSON.stringify(body));
  const expected = keys
    .toSorted((a, b) => b.createdAt - a.createdAt || (a.key < b.key ? -1 : 1))
    .slice(0, 100)
    .map((r) => r.key);
  assert.deepEqual(body.rewards.map((r: { key: string }) => r.key), expected);
  // And it read at most one entry of the index past what it answered
  assert.ok(
    reads.entries >= 100 && reads.entries <= 101,
    `${reads.entries} index entries read for 100 answered`,
  );
});

Deno.test("A player's reward list cut inside a millisecond answers that millisecond's first keys", async () => {
  await using t = await createTestApp();
  const { project, apiKey } = await createTestProject(t);
  const now = t.clock.now();
  // Given 99 rewards of one millisecond and three of an earlier one, granted in reverse key order
  const older = ["c", "b", "a"];
  for (const key of older) {
    await putReward(t.kv, project.id, rewardRecord({ key: `old-${key}`, createdAt: now - 5 }, now));
  }
  for (let i = 98; i >= 0; i--) {
    const key = `new-${String(i).padStart(2, "0")}`;
    await putReward(t.kv, project.id, rewardRecord({ key, createdAt: now }, now));
  }

  // When the game lists them
  const body = await (await call(t.app, "/v1/players/1002/rewards", { apiKey })).json();

  // Then the 99 newest come by key, then the first key of the earlier millisecond
  const answered = body.rewards.map((r: { key: string }) => r.key);
  assert.equal(answered.length, 100);
  assert.deepEqual(answered.slice(0, 3), ["new-00", "new-01", "new-02"]);
  assert.deepEqual(answered.slice(98), ["new-98", "old-a"]);
});

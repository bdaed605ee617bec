// A reward moves with its payment: the commit that settles the payment (`reward:<key>`) credits
// or releases the reward, so the reward is paid as soon as its payment reads confirmed, its
// `reward_paid` recorded right after the payment's `tx` event, and a failed payment's reward is
// held again at once. Both records carry the versionstamp of the commit that last wrote them.
import assert from "node:assert/strict";
import { okJson, startTxHarness, type TxHarness } from "../support/tx_harness.ts";
import { rewardEvents, rewardsOf, solReward } from "../support/rewards_harness.ts";
import { call } from "../support/test_app.ts";
import { heldTotals, rewardKey, type RewardRecord, rewardTxKey } from "../../kv/rewards.ts";
import { txRequestKey, type TxRequestRecord } from "../../kv/tx_requests.ts";

/** The reward and its payment as stored. */
async function storedPair(h: TxHarness, key: string) {
  const [reward, payment] = await h.a.kv.getMany<[RewardRecord, TxRequestRecord]>([
    rewardKey(h.project.id, key),
    txRequestKey(h.project.id, rewardTxKey(key)),
  ]);
  return { reward, payment };
}

/** Every event of the feed, in its order. */
async function feedEvents(h: TxHarness): Promise<Array<Record<string, unknown>>> {
  const feed = await okJson(await call(h.a.app, "/v1/events", { apiKey: h.apiKey }));
  return feed.events as Array<Record<string, unknown>>;
}

Deno.test("A reward is paid in its payment's confirming commit, its reward_paid right after the tx event", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const wallet = await h.link(61);

  // When: a reward to a linked player is granted, and its payment confirms
  await okJson(await rewardsOf(h).grant(solReward(61, "settle-paid")));
  const payment = await okJson(await h.a.status(rewardTxKey("settle-paid")));
  assert.equal(payment.status, "confirmed");

  // Then: the reward read from the store is paid, written by the payment's own commit
  const stored = await storedPair(h, "settle-paid");
  assert.equal(stored.reward.value?.status, "paid", JSON.stringify(stored.reward.value));
  assert.equal(stored.reward.value?.signature, payment.signature);
  assert.equal(stored.reward.versionstamp, stored.payment.versionstamp);
  assert.deepEqual(await heldTotals(h.a.kv, h.project.id), new Map());
  // Its event follows the payment's `tx` event in the feed, once.
  const feed = await feedEvents(h);
  const tx = feed.findIndex((e) => e.type === "tx" && e.key === rewardTxKey("settle-paid"));
  assert.ok(tx >= 0, JSON.stringify(feed));
  assert.deepEqual(
    feed.slice(tx + 1).map((e) => [e.type, e.key]),
    [["reward_paid", "settle-paid"]],
  );
  assert.equal(feed[tx + 1]!.address, wallet);
  assert.deepEqual((await rewardEvents(h)).map((e) => e.type), ["reward_paid"]);
});

Deno.test("A reward is held again in its payment's failing commit", async () => {
  // The managed wallet cannot pay 0.5 SOL: the payment's first send is refused in preflight.
  await using h = await startTxHarness({ fund: 1_000_000n });
  await h.policy({ maxSolPerTransfer: "5" });
  await h.link(62);

  // When: a reward to a linked player is granted, and its payment fails
  const granted = await okJson(await rewardsOf(h).grant(solReward(62, "settle-failed")));
  // Tried again later, not at once by the grant's turn.
  assert.equal(granted.status, "held", JSON.stringify(granted));
  const payment = await okJson(await h.a.status(rewardTxKey("settle-failed")));
  assert.equal(payment.status, "failed", JSON.stringify(payment));

  // Then: the reward is held for a retry, by the payment's own commit, and still holds its units
  const stored = await storedPair(h, "settle-failed");
  assert.equal(stored.reward.value?.status, "held", JSON.stringify(stored.reward.value));
  assert.equal(stored.reward.value?.waitingFor, "retry");
  assert.equal(stored.reward.value?.error, payment.error);
  assert.equal(stored.reward.versionstamp, stored.payment.versionstamp);
  assert.deepEqual(await heldTotals(h.a.kv, h.project.id), new Map([["sol", 500_000_000n]]));
  // The grant's turn sent it once: the retry is the reward job's, later.
  assert.equal(stored.payment.value?.attempt, 1);
});

// A reward moves with its payment: the commit that settles the payment (`reward:<key>`) credits
// or releases the reward, so the reward is paid as soon as its payment reads confirmed, its
// `reward_paid` recorded right after the payment's `tx` event, and a failed payment's reward is
// held again at once. Both records carry the versionstamp of the commit that last wrote them.
import assert from "node:assert/strict";
import { okJson, startTxHarness, type TxHarness } from "../support/tx_harness.ts";
import { rewardEvents, rewardsOf, solReward } from "../support/rewards_harness.ts";
import { call } from "../support/test_app.ts";
import {
  addRewardCreation,
  getRewardHoldsEntry,
  heldTotals,
  rewardKey,
  type RewardRecord,
  rewardTxKey,
} from "../../kv/rewards.ts";
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

Deno.test("A reward is held again in its payment's failing commit, and its job pays it later", async () => {
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

  // And when the wallet can pay, the reward's job tries it again and pays it
  await h.chain.airdrop(h.wallet!, 1_000_000_000n);
  h.chain.advanceSlots(2);
  h.a.clock.advance(60_000);
  const events = await rewardEvents(h);
  const paid = await storedPair(h, "settle-failed");
  assert.equal(paid.reward.value?.status, "paid", JSON.stringify(paid.reward.value));
  assert.equal(paid.payment.value?.attempt, 2);
  assert.equal(paid.reward.versionstamp, paid.payment.versionstamp);
  assert.deepEqual(events.map((e) => e.type), ["reward_paid"]);
  assert.deepEqual(await heldTotals(h.a.kv, h.project.id), new Map());
});

Deno.test("A reward whose payment a previous release settled without moving it is paid by its next turn", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const wallet = await h.link(63);
  const seed = await okJson(
    await h.a.post("transfer-sol", { to: { userId: 63 }, amount: "0.5", idempotencyKey: "seed" }),
  );
  assert.equal(seed.status, "confirmed");
  const projectId = h.project.id;
  const template = (await h.a.kv.get<TxRequestRecord>(txRequestKey(projectId, "seed"))).value!;

  // Given: a paying reward whose payment is confirmed, as a previous release left them
  const now = h.a.clock.now();
  const reward: RewardRecord = {
    key: "settled-before",
    userId: 63,
    kind: "transfer-sol",
    mint: null,
    amount: "0.5",
    units: "500000000",
    status: "paying",
    waitingFor: null,
    recipient: wallet,
    signature: null,
    error: null,
    createdAt: now,
    expiresAt: now + 86_400_000,
    settledAt: null,
  };
  const op = h.a.kv.atomic()
    .set(txRequestKey(projectId, rewardTxKey(reward.key)), {
      ...template,
      key: rewardTxKey(reward.key),
    });
  addRewardCreation(op, projectId, reward, await getRewardHoldsEntry(h.a.kv, projectId, 63));
  assert.ok((await op.commit()).ok);

  // When: its next turn reads it (the game's GET, as the reward's job would)
  const read = await rewardsOf(h).read(reward.key);

  // Then: paid, once, its units given back
  assert.equal(read.status, "paid", JSON.stringify(read));
  assert.equal(read.signature, template.signature);
  assert.deepEqual(await heldTotals(h.a.kv, projectId), new Map());
  assert.deepEqual((await rewardEvents(h)).map((e) => e.type), ["reward_paid"]);
});

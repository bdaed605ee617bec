// A reward to a player: held while they have no wallet, paid when they link, to the wallet linked
// then, through the payout's path (its key `reward:<key>`), with its events.
import assert from "node:assert/strict";
import { balanceOf, okJson, startTxHarness } from "../support/tx_harness.ts";
import { linkPlayer, rewardEvents, rewardsOf, solReward } from "../support/rewards_harness.ts";
import { call } from "../support/test_app.ts";
import { heldTotals } from "../../kv/rewards.ts";

Deno.test("grantReward() holds a reward for a player without a wallet and pays it when they link", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);

  // Given: a reward granted to a player who never linked
  const granted = await okJson(await api.grant(solReward(31, "win-1")));
  assert.equal(granted.status, "held");
  assert.equal(granted.waitingFor, "wallet");
  assert.equal(granted.txKey, "reward:win-1");
  assert.equal((await api.get("win-1")).status, 200);
  const listed = await okJson(await api.list(31));
  assert.deepEqual((listed.rewards as unknown[]).length, 1);
  assert.deepEqual((await rewardEvents(h)).map((e) => e.type), ["reward_held"]);

  // When: the player links a wallet
  const wallet = await linkPlayer(h, 31);
  const events = await rewardEvents(h);

  // Then: the reward is paid to it, once, through the payout's path
  const paid = await api.read("win-1");
  assert.equal(paid.status, "paid", JSON.stringify(paid));
  assert.equal(paid.recipient, wallet);
  assert.equal(paid.waitingFor, null);
  assert.equal(await balanceOf(h, wallet), 500_000_000n);
  // Paid: the project holds nothing more for players.
  assert.deepEqual(await heldTotals(h.a.kv, h.project.id), new Map());
  const payment = await okJson(await h.a.status("reward:win-1"));
  assert.equal(payment.status, "confirmed");
  assert.equal(payment.signature, paid.signature);
  assert.deepEqual(events.map((e) => e.type), ["reward_held", "reward_paid"]);
  assert.equal(events[1]!.address, wallet);
  const tx = (await h.txEvents()).filter((e) => e.key === "reward:win-1");
  assert.equal(tx.length, 1);
  assert.equal(tx[0]!.userId, 31);
  // The feed lists them too (the answer checked against the OpenAPI document by `call()`).
  const feed = await okJson(
    await call(h.a.app, "/v1/events?types=reward_held,reward_paid", { apiKey: h.apiKey }),
  );
  const inFeed = feed.events as Array<Record<string, unknown>>;
  assert.deepEqual(inFeed.map((e) => e.type), ["reward_held", "reward_paid"]);
  assert.deepEqual(inFeed[1], {
    id: inFeed[1]!.id,
    type: "reward_paid",
    createdAt: inFeed[1]!.createdAt,
    key: "win-1",
    userId: 31,
    kind: "transfer-sol",
    mint: null,
    amount: "0.5",
    address: wallet,
    signature: paid.signature,
  });
});

Deno.test("grantReward() pays a linked player's reward at once", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const wallet = await linkPlayer(h, 32);
  const paid = await okJson(await rewardsOf(h).grant(solReward(32, "win-2", "1")));
  assert.equal(paid.status, "paid", JSON.stringify(paid));
  assert.equal(paid.recipient, wallet);
  assert.equal(await balanceOf(h, wallet), 1_000_000_000n);
  // The same grant again answers it as it stands, and pays nothing more.
  const again = await okJson(await rewardsOf(h).grant(solReward(32, "win-2", "1")));
  assert.deepEqual(again, paid);
  assert.equal(await balanceOf(h, wallet), 1_000_000_000n);
  assert.deepEqual((await rewardEvents(h)).map((e) => e.type), ["reward_paid"]);
});

Deno.test("A player holding more rewards than one round of the link's job takes is paid them all", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  const count = 130;
  for (let i = 0; i < count; i++) {
    await okJson(await api.grant(solReward(33, `many-${i}`, "0.001")));
    // One grant a clock millisecond apart: the rounds go oldest first.
    h.a.clock.advance(1);
  }
  const wallet = await linkPlayer(h, 33);
  const events = await rewardEvents(h);
  assert.equal(events.filter((e) => e.type === "reward_paid").length, count);
  assert.equal(await balanceOf(h, wallet), BigInt(count) * 1_000_000n);
});

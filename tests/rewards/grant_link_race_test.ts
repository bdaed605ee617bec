// A grant racing a link, on two instances over KV Connect: each commit is checked on what the other
// writes (the grant on the player's link, the link on the player's holds), so whichever commits
// second sees the first, and the reward is paid once, to the wallet linked. The race is ordered by
// holding one commit's write in the store stand-in until the other has committed.
import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { holdNextWrite, startRemoteStore } from "../support/remote_store.ts";
import { balanceOf, okJson, startTxHarness, type TxHarness } from "../support/tx_harness.ts";
import { linkPlayer, rewardEvents, rewardsOf, solReward } from "../support/rewards_harness.ts";

/** The reward was paid once, to `wallet`, with one `reward_paid` event after `before`. */
async function assertPaidOnceTo(h: TxHarness, key: string, wallet: string, before: string[]) {
  const events = await rewardEvents(h);
  assert.deepEqual(events.map((e) => e.type), [...before, "reward_paid"]);
  assert.equal(events.at(-1)!.address, wallet);
  const reward = await rewardsOf(h).read(key);
  assert.equal(reward.status, "paid", JSON.stringify(reward));
  assert.equal(reward.recipient, wallet);
  const payment = await getTxRequest(h.a.kv, h.project.id, `reward:${key}`);
  assert.equal(payment?.signature, reward.signature);
  assert.equal(await balanceOf(h, wallet as never), 500_000_000n);
}

Deno.test("A link committed while a grant's commit is in flight: the grant sees it and pays the wallet at once", async () => {
  await using store = await startRemoteStore();
  await using h = await startTxHarness({ kvPath: store.url });
  const b = await h.instance();
  await h.policy({ maxSolPerTransfer: "5" });
  const wallet = (await generateKeyPairSigner()).address;

  // Given: a grant to player 71, who has no wallet, read the store and sent its commit, held
  const hold = holdNextWrite(store, "race-link-first");
  const granting = rewardsOf(h).grant(solReward(71, "race-link-first"));
  await hold.held;

  // When: the player links on the other instance, then the grant's commit goes on
  await linkPlayer(h, 71, { address: wallet, instance: b });
  hold.release();
  const granted = await okJson(await granting);

  // Then: the grant found the link (never held for a wallet) and the reward is paid once to it
  assert.notEqual(granted.waitingFor, "wallet", JSON.stringify(granted));
  await assertPaidOnceTo(h, "race-link-first", wallet, []);
});

Deno.test("A grant committed while a link's commit is in flight: the link sees it and its job pays the wallet", async () => {
  await using store = await startRemoteStore();
  await using h = await startTxHarness({ kvPath: store.url });
  const b = await h.instance();
  await h.policy({ maxSolPerTransfer: "5" });
  const wallet = (await generateKeyPairSigner()).address;

  // Given: player 72 linking on the other instance, the link read the store and sent its commit, held
  const hold = holdNextWrite(store, wallet);
  const linking = linkPlayer(h, 72, { address: wallet, instance: b });
  await hold.held;

  // When: a reward is granted to the player, then the link's commit goes on
  const granted = await okJson(await rewardsOf(h).grant(solReward(72, "race-grant-first")));
  hold.release();
  await linking;

  // Then: the grant held it for a wallet, and the link's job paid it once to the wallet linked
  assert.equal(granted.status, "held");
  assert.equal(granted.waitingFor, "wallet");
  await assertPaidOnceTo(h, "race-grant-first", wallet, ["reward_held"]);
});

// A reward is paid to the wallet its player has linked when it is paid: a player who unlinks
// before then keeps it held, one who links another wallet is paid there, and a wallet taken by
// another account takes none of the rewards granted to the first.
import assert from "node:assert/strict";
import { balanceOf, okJson, startTxHarness } from "../support/tx_harness.ts";
import { getReward } from "../../kv/rewards.ts";
import { runSweeps } from "../../jobs/sweeps.ts";
import {
  linkPlayer,
  rewardEvents,
  rewardsOf,
  solReward,
  unlinkPlayer,
} from "../support/rewards_harness.ts";

Deno.test("A reward whose player unlinks before its payment stays held, then pays the wallet linked next", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  await okJson(await api.grant(solReward(41, "keep")));

  // Given: the player links, and unlinks before the link's job runs
  const first = await linkPlayer(h, 41);
  await unlinkPlayer(h, 41);
  await rewardEvents(h);

  // Then: nothing was paid; the reward still waits for a wallet
  const held = await api.read("keep");
  assert.equal(held.status, "held");
  assert.equal(held.waitingFor, "wallet");
  assert.equal(await balanceOf(h, first), 0n);
  assert.equal((await h.a.status("reward:keep")).status, 404);

  // When: they link another wallet
  const second = await linkPlayer(h, 41);
  await rewardEvents(h);

  // Then: it is paid there, once
  const paid = await api.read("keep");
  assert.equal(paid.status, "paid");
  assert.equal(paid.recipient, second);
  assert.equal(await balanceOf(h, second), 500_000_000n);
  assert.equal(await balanceOf(h, first), 0n);
});

Deno.test("A wallet another account takes before the payment takes none of the first account's rewards", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  await okJson(await api.grant(solReward(42, "mine")));

  // Given: the player links a wallet, and another account takes it before the job runs
  const shared = await linkPlayer(h, 42);
  await linkPlayer(h, 43, { address: shared });
  const events = await rewardEvents(h);

  // Then: the reward stays with its player, held for a wallet; the wallet got nothing
  const held = await api.read("mine");
  assert.equal(held.status, "held");
  assert.equal(held.waitingFor, "wallet");
  assert.equal(await balanceOf(h, shared), 0n);
  assert.deepEqual(events.map((e) => e.type), ["reward_held"]);
  assert.deepEqual(((await okJson(await api.list(43))).rewards as unknown[]).length, 0);

  // When: the player links a wallet of their own
  const own = await linkPlayer(h, 42);
  await rewardEvents(h);

  // Then: it is paid there
  const paid = await api.read("mine");
  assert.equal(paid.status, "paid");
  assert.equal(paid.recipient, own);
  assert.equal(await balanceOf(h, own), 500_000_000n);
  assert.equal(await balanceOf(h, shared), 0n);
});

Deno.test("A reward granted to a linked player who relinks before it pays goes to the new wallet", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  // Given: a reward held while its player has no wallet; they link one, then another at once
  await okJson(await api.grant(solReward(44, "moved")));
  const first = await linkPlayer(h, 44);
  const second = await linkPlayer(h, 44);
  await rewardEvents(h);
  // Then: it pays the wallet linked when it is paid, once
  const paid = await api.read("moved");
  assert.equal(paid.recipient, second);
  assert.equal(await balanceOf(h, second), 500_000_000n);
  assert.equal(await balanceOf(h, first), 0n);
  const payment = await okJson(await h.a.status("reward:moved"));
  assert.equal(payment.status, "confirmed");
});

Deno.test("A held reward is paid on link after the key that granted it was revoked", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  await okJson(await api.grant(solReward(45, "owed")));
  // Given: the key that granted it is revoked
  await h.revokeKey();
  // When: the player links
  const wallet = await linkPlayer(h, 45);
  await rewardEvents(h);
  // Then: the project pays what it owes
  assert.equal(await balanceOf(h, wallet), 500_000_000n);
  assert.equal((await getReward(h.a.kv, h.project.id, "owed")).value?.status, "paid");
});

Deno.test("A player linked by the version before rewards (no link job) is paid by the minute cron's sweep", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  await okJson(await api.grant(solReward(46, "old-link")));
  // Given: a link written as the previous version writes it: the link alone, no job
  const wallet = await h.link(46);
  await rewardEvents(h);
  assert.equal((await api.read("old-link")).status, "held");
  // When: the minute cron's sweeps run
  const repaired = await runSweeps(h.a.ctx);
  await rewardEvents(h);
  // Then: the reward is paid, once; a second sweep finds nothing to repair
  assert.equal(repaired.rewards_of_linked_players, 1);
  assert.equal((await api.read("old-link")).status, "paid");
  assert.equal(await balanceOf(h, wallet), 500_000_000n);
  assert.equal((await runSweeps(h.a.ctx)).rewards_of_linked_players, 0);
});

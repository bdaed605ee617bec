// A cancel or an expiry racing a link's payment: whichever commits first on the reward decides.
// The payment's reservation is checked on the reward (its sender), so a reward cancelled or
// expired while its payment was being built is never paid; one whose payment was reserved first
// can no longer be cancelled, and is paid. The race is ordered by holding the payment's RPC call.
import assert from "node:assert/strict";
import {
  balanceOf,
  okJson,
  onEachStore,
  startTxHarness,
  type TxHarness,
} from "../support/tx_harness.ts";
import { rewardEvents, rewardsOf, solReward } from "../support/rewards_harness.ts";
import { payReward } from "../../lib/rewards/pay.ts";
import { startDeadline } from "../../lib/tx/rpc/timing.ts";
import { DAY_MS } from "../../lib/rewards/request_body.ts";

/** Starts paying the linked player's reward `key` as its job does, held at the RPC call `heldAt`. */
async function payHeldAt(h: TxHarness, key: string, heldAt: string) {
  const held = h.proxy.hold(heldAt);
  const ctx = h.a.ctx;
  const paying = payReward(ctx, { projectId: h.project.id, key }, {
    deadline: startDeadline(ctx.tx.timing),
  });
  await held.arrived;
  // Wrapped: an async function's answer would wait for the payment itself.
  return { paying };
}

onEachStore("A reward cancelled while its payment is being built is never paid", async (store) => {
  await using h = await startTxHarness({ proxy: true, store });
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  await okJson(await api.grant(solReward(51, "race-cancel")));
  const wallet = await h.link(51);

  // Given: its payment is being built (the blockhash call held), not reserved yet
  const { paying } = await payHeldAt(h, "race-cancel", "getLatestBlockhash");

  // When: the game cancels it, then the payment goes on
  const cancelled = await okJson(await api.cancel("race-cancel"));
  h.proxy.release({ forward: true });
  const outcome = await paying;

  // Then: cancelled, and nothing reserved or paid
  assert.equal(cancelled.status, "cancelled");
  assert.equal(outcome.reward?.status, "cancelled");
  assert.equal((await h.a.status("reward:race-cancel")).status, 404);
  assert.equal(await balanceOf(h, wallet), 0n);
  assert.deepEqual((await rewardEvents(h)).map((e) => e.type), ["reward_held", "reward_cancelled"]);
});

Deno.test("A reward whose payment was reserved first cannot be cancelled, and is paid", async () => {
  await using h = await startTxHarness({ proxy: true });
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  await okJson(await api.grant(solReward(52, "race-paid")));
  const wallet = await h.link(52);

  // Given: its payment reserved and signed, its send held
  const { paying } = await payHeldAt(h, "race-paid", "sendTransaction");

  // When: the game cancels it
  const refused = await api.cancel("race-paid");
  const body = await refused.json();
  h.proxy.release({ forward: true });
  await paying;
  await rewardEvents(h);

  // Then: refused, and the reward is paid once
  assert.equal(refused.status, 409);
  assert.equal(body.error.code, "reward_not_cancellable");
  const paid = await api.read("race-paid");
  assert.equal(paid.status, "paid", JSON.stringify(paid));
  assert.equal(await balanceOf(h, wallet), 500_000_000n);
});

Deno.test("A reward that expires while its payment is being built is never paid", async () => {
  await using h = await startTxHarness({ proxy: true });
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  await okJson(await api.grant({ ...solReward(53, "race-expiry"), expiresInDays: 1 }));
  const wallet = await h.link(53);

  // Given: its payment is being built
  const { paying } = await payHeldAt(h, "race-expiry", "getLatestBlockhash");

  // When: its expiry comes and its expiry job runs, then the payment goes on
  h.a.clock.advance(DAY_MS);
  await h.a.worker.runDue();
  h.proxy.release({ forward: true });
  await paying;

  // Then: expired, nothing paid
  const expired = await api.read("race-expiry");
  assert.equal(expired.status, "expired");
  assert.equal((await h.a.status("reward:race-expiry")).status, 404);
  assert.equal(await balanceOf(h, wallet), 0n);
  assert.deepEqual((await rewardEvents(h)).map((e) => e.type), ["reward_held", "reward_expired"]);
});

Deno.test("A reward still held at its expiry is released, and a link after it pays nothing", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const api = rewardsOf(h);
  await okJson(await api.grant({ ...solReward(54, "late"), expiresInDays: 2 }));
  // Not yet: a day before its expiry it is still held.
  h.a.clock.advance(DAY_MS);
  await rewardEvents(h);
  assert.equal((await api.read("late")).status, "held");
  // At its expiry, its job releases it.
  h.a.clock.advance(DAY_MS);
  await rewardEvents(h);
  const expired = await api.read("late");
  assert.equal(expired.status, "expired");
  assert.equal(expired.settledAt, h.a.clock.now());
  // A link after it pays nothing, and the player holds nothing more.
  const wallet = await h.link(54);
  await rewardEvents(h);
  assert.equal(await balanceOf(h, wallet), 0n);
  assert.deepEqual((await rewardEvents(h)).map((e) => e.type), ["reward_held", "reward_expired"]);
  const cancel = await api.cancel("late");
  assert.equal(cancel.status, 409);
});

Deno.test("A linked player's reward the hourly budget refuses waits for room, then pays when the hour has room", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "1", hourlyBudgets: [{ asset: "SOL", amount: "1" }] });
  const api = rewardsOf(h);
  const wallet = await h.link(55);
  // Given: the hour's budget spent by a payout
  const spent = await h.a.post("transfer-sol", {
    to: { userId: 55 },
    amount: "1",
    idempotencyKey: "spend",
  });
  assert.equal((await spent.json()).status, "confirmed");
  // When: a reward is granted: held for room, its first wait reported as held
  const held = await okJson(await api.grant(solReward(55, "room", "0.5")));
  assert.deepEqual([held.status, held.waitingFor], ["held", "room"]);
  await rewardEvents(h);
  assert.equal((await api.read("room")).status, "held");
  // Then: once the hour has passed, its next turn pays it
  h.a.clock.advance(61 * 60_000);
  const events = await rewardEvents(h);
  assert.equal((await api.read("room")).status, "paid");
  assert.equal(await balanceOf(h, wallet), 1_500_000_000n);
  assert.deepEqual(events.map((e) => e.type), ["reward_held", "reward_paid"]);
});

Deno.test("A reward waiting for room past its expiry is released, not paid", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "1", perPlayerPerHour: 1 });
  const api = rewardsOf(h);
  const wallet = await h.link(56);
  await okJson(await api.grant(solReward(56, "first", "0.1")));
  const waiting = await okJson(
    await api.grant({ ...solReward(56, "late", "0.1"), expiresInDays: 1 }),
  );
  assert.deepEqual([waiting.status, waiting.waitingFor], ["held", "room"]);
  // When: its expiry comes before it was tried again
  h.a.clock.advance(DAY_MS);
  const events = await rewardEvents(h);
  // Then: released, and only the first was paid
  assert.equal((await api.read("late")).status, "expired");
  assert.equal(await balanceOf(h, wallet), 100_000_000n);
  assert.deepEqual(
    events.filter((e) => e.key === "late").map((e) => e.type),
    ["reward_held", "reward_expired"],
  );
});

// Rewards across instances of the service on one store: two instances seeing one link pay its
// reward once, and a round of players linking within a minute (1,000 by default; set
// REWARD_ROUND_PLAYERS to change it) have their held rewards paid within the policy's limits,
// the ones past the hourly budget waiting for room, none paid twice.
import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { payReward } from "../../lib/rewards/pay.ts";
import { startDeadline } from "../../lib/tx/rpc/timing.ts";
import {
  balanceOf,
  okJson,
  onEachStore,
  startTxHarness,
  type TxHarness,
} from "../support/tx_harness.ts";
import { linkPlayer, rewardsOf, solReward } from "../support/rewards_harness.ts";
import { HOUR_WINDOW_MS } from "../../kv/tx_usage.ts";
import { listRewardsOfPlayer } from "../../kv/rewards.ts";

const ROUND_PLAYERS = Number(Deno.env.get("REWARD_ROUND_PLAYERS") ?? 1_000);

/** Runs due jobs on every instance at once, until none is left on any. */
async function drainAll(instances: Array<TxHarness["a"]>): Promise<void> {
  for (let round = 0; round < 1_000; round++) {
    const ran = await Promise.all(instances.map((i) => i.worker.runDue()));
    if (ran.every((n) => n === 0)) return;
  }
  throw new Error("Jobs kept coming");
}

/** The stand-in's messages of `type` for the keys `keys`, by key. */
function messagesByKey(h: TxHarness, type: string, keyOf: (key: string) => string) {
  const counts = new Map<string, number>();
  for (const message of h.standIn.inbox()) {
    const data = message.data as Record<string, unknown>;
    if (data?.type !== type) continue;
    const key = keyOf(String(data.key));
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

onEachStore("Two instances that see one link pay its reward once", async (store) => {
  await using h = await startTxHarness({ store });
  const b = await h.instance();
  await h.policy({ maxSolPerTransfer: "5" });
  await okJson(await rewardsOf(h).grant(solReward(61, "once")));

  // Given: the player links on one instance and again (the same wallet) on the other
  const wallet = await linkPlayer(h, 61);
  await linkPlayer(h, 61, { address: wallet, instance: b });

  // When: both instances run the link's jobs and pay the reward themselves, all at once
  const ref = { projectId: h.project.id, key: "once" };
  const pay = (ctx: typeof h.a.ctx) =>
    payReward(ctx, ref, { deadline: startDeadline(ctx.tx.timing) });
  await Promise.all([pay(h.a.ctx), pay(b.ctx), drainAll([h.a, b])]);
  await drainAll([h.a, b]);

  // Then: paid once
  const paid = await rewardsOf(h, b).read("once");
  assert.equal(paid.status, "paid");
  assert.equal(await balanceOf(h, wallet), 500_000_000n);
  const payment = await getTxRequest(h.a.kv, h.project.id, "reward:once");
  assert.equal(payment?.attempt, 1);
  assert.equal(messagesByKey(h, "reward_paid", (k) => k).get("once"), 1);
  assert.equal(messagesByKey(h, "tx", (k) => k).get("reward:once"), 1);
});

Deno.test(`A round of ${ROUND_PLAYERS} players linking within a minute: their rewards paid within the hourly budget, none twice`, async () => {
  await using h = await startTxHarness({ store: "file", fund: 1_000_000_000_000n });
  const b = await h.instance();
  const amount = 1_000_000n; // 0.001 SOL
  const budget = (BigInt(ROUND_PLAYERS) / 2n) * amount;
  await h.policy({
    maxSolPerTransfer: "1",
    hourlyBudgets: [{ asset: "SOL", amount: (Number(budget) / 1e9).toString() }],
  });
  const players = Array.from({ length: ROUND_PLAYERS }, (_, i) => 1_000 + i);

  // Given: a reward held for each player, none linked
  for (const [i, userId] of players.entries()) {
    await okJson(await rewardsOf(h).grant(solReward(userId, `round:${userId}`, "0.001")));
    // Within the 600-a-minute request quota: the quota is not what this test measures.
    if (i % 500 === 499) h.a.clock.advance(61_000);
  }

  // When: every player links within the minute, half of them on each instance
  const wallets = new Map<number, string>();
  for (const [i, userId] of players.entries()) {
    const address = (await generateKeyPairSigner()).address;
    wallets.set(userId, address);
    await linkPlayer(h, userId, { address, instance: i % 2 === 0 ? h.a : b });
  }
  h.a.clock.advance(59_000);
  await drainAll([h.a, b]);

  // Then: what was paid stays within the hour's budget; the rest waits for room
  const statuses = async () => {
    const counts: Record<string, number> = {};
    for (const userId of players) {
      const [reward] = await listRewardsOfPlayer(h.a.kv, h.project.id, userId);
      const label = `${reward!.status}${reward!.waitingFor ? `:${reward!.waitingFor}` : ""}`;
      counts[label] = (counts[label] ?? 0) + 1;
    }
    return counts;
  };
  const first = await statuses();
  const paidFirst = first.paid ?? 0;
  assert.ok(BigInt(paidFirst) * amount <= budget, JSON.stringify(first));
  assert.ok(paidFirst > 0, JSON.stringify(first));
  assert.equal(paidFirst + (first["held:room"] ?? 0), ROUND_PLAYERS, JSON.stringify(first));

  console.log(`After the round: ${JSON.stringify(first)}`);

  // When: hours pass, and the waiting rewards are tried again (the last ones may wait for the
  // day's quota: places of blocks leased by the instances count whole until they leave the window)
  for (let hour = 0; hour < 26 && (await statuses()).paid !== ROUND_PLAYERS; hour++) {
    h.a.clock.advance(HOUR_WINDOW_MS + 60_000);
    await drainAll([h.a, b]);
  }

  // Then: every reward is paid, each once, to its player's wallet
  assert.deepEqual(await statuses(), { paid: ROUND_PLAYERS });
  const paidMessages = messagesByKey(h, "reward_paid", (k) => k);
  const txMessages = messagesByKey(h, "tx", (k) => k);
  for (const userId of players) {
    const key = `round:${userId}`;
    assert.equal(paidMessages.get(key), 1, key);
    assert.equal(txMessages.get(`reward:${key}`), 1, key);
    const payment = await getTxRequest(h.a.kv, h.project.id, `reward:${key}`);
    assert.equal(payment?.attempt, 1, key);
    assert.equal(payment?.recipient, wallets.get(userId), key);
  }
  // Balances: a sample of the wallets (every one is checked through its single payment above).
  for (const userId of players.slice(0, 20)) {
    assert.equal(await balanceOf(h, wallets.get(userId)! as never), amount);
  }
});

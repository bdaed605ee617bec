// Quotas and hourly limits: rolling windows, failed attempts excluded, and never exceeded by
// concurrent requests, within one instance or across two sharing a store.
import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import { READ_TRIES } from "../../lib/tx/rpc/chain_errors.ts";
import {
  onEachStore,
  outcomeOf,
  startTxHarness,
  tally,
  type TxHarness,
  type TxInstance,
} from "../support/tx_harness.ts";
import { txFailedUsageKey } from "../../kv/tx_usage.ts";

const HOUR = 60 * 60 * 1000;

/** Sends `n` one-SOL transfers to `n` different players at once, spread over the instances. */
async function spend(
  h: TxHarness,
  instances: TxInstance[],
  n: number,
): Promise<Record<string, number>> {
  for (let i = 0; i < n; i++) await h.link(1000 + i);
  const outcomes = await Promise.all(Array.from({ length: n }, async (_, i) => {
    const instance = instances[i % instances.length];
    assert.ok(instance);
    return await outcomeOf(
      await instance.post("transfer-sol", {
        to: { userId: 1000 + i },
        amount: "1",
        idempotencyKey: `spend-${i}`,
      }),
    );
  }));
  return tally(outcomes);
}

onEachStore(
  "Concurrent requests with different keys never take an asset past its hourly budget",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "1", hourlyBudgets: [{ asset: "SOL", amount: "5" }] });
    assert.deepEqual(await spend(h, [h.a], 20), { confirmed: 5, hourly_budget_exceeded: 15 });
    // The budget is per rolling hour.
    h.a.clock.advance(HOUR);
    const again = await outcomeOf(
      await h.a.post("transfer-sol", {
        to: { userId: 1000 },
        amount: "1",
        idempotencyKey: "later",
      }),
    );
    assert.equal(again, "confirmed");
  },
);

onEachStore(
  "Two instances sharing a store never together exceed the hourly budget",
  async (store) => {
    await using h = await startTxHarness({ store });
    const b = await h.instance();
    await h.policy({ maxSolPerTransfer: "1", hourlyBudgets: [{ asset: "SOL", amount: "7" }] });
    assert.deepEqual(await spend(h, [h.a, b], 24), { confirmed: 7, hourly_budget_exceeded: 17 });
  },
);

onEachStore(
  "Failed attempts do not count against the hourly limits or the budget",
  async (store) => {
    await using h = await startTxHarness({ store, fund: 2_000_000_000n });
    await h.policy({
      maxSolPerTransfer: "10",
      perRecipientPerHour: 1,
      perPlayerPerHour: 1,
      hourlyBudgets: [{ asset: "SOL", amount: "5" }],
    });
    await h.link(1);
    // Given: an attempt that fails in simulation (the wallet holds 2 SOL)
    const failed = await outcomeOf(
      await h.a.post("transfer-sol", {
        to: { userId: 1 },
        amount: "5",
        idempotencyKey: "too-much",
      }),
    );
    assert.equal(failed, "failed");
    // Then: the recipient, the player and the whole budget are still free
    const sent = await outcomeOf(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1", idempotencyKey: "fits" }),
    );
    assert.equal(sent, "confirmed");
    const next = await outcomeOf(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1", idempotencyKey: "third" }),
    );
    assert.equal(next, "recipient_rate_limited");
  },
);

onEachStore("The recipient and player limits are rolling hours", async (store) => {
  await using h = await startTxHarness({ store });
  await h.policy({ maxSolPerTransfer: "1", perPlayerPerHour: 2 });
  await h.link(1);
  const send = async (key: string) =>
    await outcomeOf(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "0.1", idempotencyKey: key }),
    );
  assert.equal(await send("a"), "confirmed");
  h.a.clock.advance(HOUR / 2);
  assert.equal(await send("b"), "confirmed");
  assert.equal(await send("c"), "player_rate_limited");
  // One hour after the first, it has left the window; the second has not.
  h.a.clock.advance(HOUR / 2);
  assert.equal(await send("d"), "confirmed");
  assert.equal(await send("e"), "player_rate_limited");
});

Deno.test("The daily transaction quota: 1,000 in a rolling 24 hours, failed ones excluded, checked before the hourly limits", async () => {
  await using h = await startTxHarness({ fund: 10_000_000_000n, timing: { confirmWaitMs: 0 } });
  // Identical requests (same recipient and amount) also prove each attempt is its own transaction.
  await h.policy({ maxSolPerTransfer: "100" });
  await h.link(1);
  const send = async (key: string, amount = "0.001") =>
    await outcomeOf(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount, idempotencyKey: key }),
    );
  // Given: 999 transactions and one that fails in simulation
  for (let batch = 0; batch < 999; batch += 111) {
    // Stay within the 600 requests per minute of the request quota.
    h.a.clock.advance(60_000);
    const outcomes = await Promise.all(
      Array.from({ length: 111 }, (_, i) => send(`tx-${batch + i}`)),
    );
    assert.ok(
      outcomes.every((o) => o === "submitted" || o === "confirmed"),
      JSON.stringify(tally(outcomes)),
    );
  }
  assert.equal(await send("fails", "99"), "failed");
  // Then: the failed one left room for one more
  assert.notEqual(await send("the-1000th"), "daily_tx_quota_exceeded");
  await h.policy({ maxSolPerTransfer: "100", perRecipientPerHour: 1 });
  assert.equal(await send("the-1001st"), "daily_tx_quota_exceeded");
  // When: 24 hours have passed since they were made
  h.a.clock.advance(24 * HOUR);
  await h.policy({ maxSolPerTransfer: "100" });
  assert.notEqual(await send("next-day"), "daily_tx_quota_exceeded");
});

Deno.test("The daily cap on failed transactions: 2,000 failures after signing in a rolling 24 hours, checked after the spec's limits", async () => {
  await using h = await startTxHarness({ fund: 2_000_000_000n, proxy: true });
  await h.policy({ maxSolPerTransfer: "100" });
  await h.link(1);
  await h.link(2);
  const send = async (key: string, options: { to?: number; amount?: string } = {}) =>
    await outcomeOf(
      await h.a.post("transfer-sol", {
        to: { userId: options.to ?? 2 },
        amount: options.amount ?? "0.001",
        idempotencyKey: key,
      }),
    );
  // Given: one payout to player 1; 1,887 failures earlier today, as the settling commits left
  // them in the project's window (2,000 real ones would take the suite a minute)...
  assert.equal(await send("paid", { to: 1 }), "confirmed");
  const earlier = h.a.clock.now() - HOUR;
  await h.a.kv.set(txFailedUsageKey(h.project.id), {
    times: Array.from({ length: 1_887 }, (_, i) => earlier + i),
    amounts: [],
  });
  // ...and a burst of 111 at once that fail in simulation (the wallet holds 2 SOL): each is
  // answered `failed`, none lost to the others' settling
  const burst = await Promise.all(
    Array.from({ length: 111 }, (_, i) => send(`broke-${i}`, { amount: "50" })),
  );
  assert.deepEqual(tally(burst), { failed: 111 });
  // And a failure before signing (the node did not answer the blockhash; the last one read is
  // reused for a second): not counted
  await new Promise((r) => setTimeout(r, 1_100));
  h.proxy.failNext("getLatestBlockhash", READ_TRIES);
  assert.equal(await send("no-blockhash", { amount: "50" }), "rpc_error");

  // Then: two more failures fit; after them, a payout the spec allows is refused, unreserved
  assert.equal(await send("the-1999th", { amount: "50" }), "failed");
  assert.equal(await send("the-2000th", { amount: "50" }), "failed");
  assert.equal(await send("refused"), "daily_failed_tx_quota_exceeded");
  assert.equal((await h.a.status("refused")).status, 404);
  // And a payout the spec refuses gets the spec's code: the cap is checked after every limit
  await h.policy({ maxSolPerTransfer: "100", perRecipientPerHour: 1 });
  assert.equal(await send("again", { to: 1 }), "recipient_rate_limited");

  // When: 24 hours have passed since the failures
  h.a.clock.advance(24 * HOUR);
  await h.policy({ maxSolPerTransfer: "100" });
  assert.equal(await send("next-day"), "confirmed");
});

onEachStore("Requests on two instances at once never pass the cap on failures", async (store) => {
  await using h = await startTxHarness({ store, fund: 2_000_000_000n });
  const b = await h.instance();
  await h.policy({ maxSolPerTransfer: "100" });
  await h.link(2);
  // Given: 1,990 failures earlier today, as the settling commits left them
  const earlier = h.a.clock.now() - HOUR;
  await h.a.kv.set(txFailedUsageKey(h.project.id), {
    times: Array.from({ length: 1_990 }, (_, i) => earlier + i),
    amounts: [],
  });

  // When: 30 payouts the wallet cannot cover arrive at once, half on each instance
  const outcomes = await Promise.all(Array.from({ length: 30 }, async (_, i) => {
    const instance = i % 2 === 0 ? h.a : b;
    return await outcomeOf(
      await instance.post("transfer-sol", {
        to: { userId: 2 },
        amount: "50",
        idempotencyKey: `broke-${i}`,
      }),
    );
  }));

  // Then: exactly 10 were tried (and failed); the others were refused before being reserved
  assert.deepEqual(tally(outcomes), { failed: 10, daily_failed_tx_quota_exceeded: 20 });
});

onEachStore(
  "Three instances paying uneven amounts at once never pass the budget, and once their blocks settle the room left is exact",
  async (store) => {
    await using h = await startTxHarness({ store, fund: 1_000_000_000_000n });
    const instances = [h.a, await h.instance(), await h.instance()];
    await h.policy({ maxSolPerTransfer: "1", hourlyBudgets: [{ asset: "SOL", amount: "10" }] });
    const amounts = Array.from({ length: 36 }, (_, i) => [0.25, 0.5, 0.75, 1][i % 4]!);
    // When: two waves of payouts of 0.25 to 1 SOL, spread over the three instances
    let paid = 0;
    for (const wave of [amounts.slice(0, 18), amounts.slice(18)]) {
      const outcomes = await Promise.all(wave.map(async (amount, i) => {
        const res = await instances[i % 3]!.post("transfer-sol", {
          to: { address: (await generateKeyPairSigner()).address },
          amount: String(amount),
          idempotencyKey: `uneven-${paid}-${i}`,
        });
        return { amount, outcome: await outcomeOf(res) };
      }));
      for (const { amount, outcome } of outcomes) {
        if (outcome === "confirmed") paid += amount;
        else assert.equal(outcome, "hourly_budget_exceeded");
      }
    }
    // Then: never past the budget
    assert.ok(paid <= 10, `paid ${paid} SOL`);
    // And: once every instance's blocks are settled, exactly the rest fits, and nothing more
    for (const instance of instances) await instance.ctx.tx.allowances.settle(h.project.id);
    const rest = 10 - paid;
    const pay = async (amount: string, key: string) =>
      await outcomeOf(
        await h.a.post("transfer-sol", {
          to: { address: (await generateKeyPairSigner()).address },
          amount,
          idempotencyKey: key,
        }),
      );
    if (rest > 0) {
      assert.equal(await pay(String(rest), "the-rest"), "confirmed");
    }
    assert.equal(await pay("0.000000001", "one-more"), "hourly_budget_exceeded");
  },
);

// A lowered hourly budget binds at once: once the policy's save has committed, no payout reserved
// later passes the new budget, on any instance, whatever blocks of the old budget are still held
// and whatever the payout's own checks read before the save.
import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import {
  onEachStore,
  outcomeOf,
  startTxHarness,
  type TestStore,
  type TxInstance,
} from "../support/tx_harness.ts";
import { allowanceKey, type AllowanceLedger } from "../../kv/tx_allowance.ts";

const budget = (amount: string) => ({
  maxSolPerTransfer: "1",
  hourlyBudgets: [{ asset: "SOL", amount }],
});

async function pay(instance: TxInstance, key: string): Promise<string> {
  const to = (await generateKeyPairSigner()).address;
  const res = await instance.post("transfer-sol", {
    to: { address: to },
    amount: "0.01",
    idempotencyKey: key,
  });
  return await outcomeOf(res);
}

onEachStore(
  "A lowered hourly budget binds at once on every instance: blocks granted under the old one pay no more",
  async (store) => {
    await using h = await startTxHarness({ store, fund: 1_000_000_000_000n });
    const b = await h.instance();
    await h.policy(budget("10"));
    // Given: both instances paid a burst, then two more each, and hold blocks of the budget taken
    // ahead of their next payouts
    for (const instance of [h.a, b]) {
      const burst = await Promise.all(
        Array.from(
          { length: 8 },
          (_, i) => pay(instance, `burst-${instance.ctx.tx.allowances.holder}-${i}`),
        ),
      );
      const more = [];
      for (let i = 0; i < 2; i++) {
        more.push(await pay(instance, `more-${instance.ctx.tx.allowances.holder}-${i}`));
      }
      for (const outcome of [...burst, ...more]) assert.equal(outcome, "confirmed");
    }
    const ledger =
      (await h.a.kv.get<AllowanceLedger>(allowanceKey(h.project.id, "asset:SOL"))).value;
    const holders = new Set(ledger?.leases.map((lease) => lease.holder));
    assert.ok(holders.has(h.a.ctx.tx.allowances.holder) && holders.has(b.ctx.tx.allowances.holder));

    // When: the budget is cut below one payout's amount
    await h.policy(budget("0.001"));

    // Then: no payout reserved after the save passes it, on either instance
    const after = await Promise.all(
      Array.from({ length: 10 }, (_, i) => pay(i % 2 === 0 ? h.a : b, `after-${i}`)),
    );
    assert.deepEqual(after, after.map(() => "hourly_budget_exceeded"));
  },
);

/** A payout checked under a 1 SOL budget, held by its signing while `cut` is saved; its outcome. */
async function payAcross(store: TestStore, cut: unknown): Promise<string> {
  await using h = await startTxHarness({ store, proxy: true });
  await h.policy(budget("1"));
  const held = h.proxy.hold("getLatestBlockhash");
  const payout = pay(h.a, "in-flight");
  await held.arrived;
  await h.policy(cut);
  h.proxy.release();
  return await payout;
}

onEachStore(
  "A payout checked before a budget cut and reserved after it is judged under the new budget",
  async (store) => {
    assert.equal(await payAcross(store, budget("0.001")), "hourly_budget_exceeded");
  },
);

onEachStore(
  "A payout checked before its asset was disabled and reserved after it is refused",
  async (store) => {
    assert.equal(await payAcross(store, { maxSolPerTransfer: null }), "sol_transfers_disabled");
  },
);

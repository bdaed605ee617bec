// A round end: 500 payouts of one project, distinct recipients, keys and players, arriving at
// once over two instances on one store. Every one is answered confirmed or submitted, none is
// refused or fails because of contention, and the limits stay exact.
import assert from "node:assert/strict";
import {
  onEachStore,
  outcomeOf,
  startTxHarness,
  tally,
  type TxHarness,
  type TxInstance,
} from "../support/tx_harness.ts";

const BURST = 500;

async function burst(h: TxHarness, instances: TxInstance[], n: number, offset = 0) {
  await Promise.all(Array.from({ length: n }, (_, i) => h.link(10_000 + offset + i)));
  return tally(
    await Promise.all(Array.from({ length: n }, async (_, i) =>
      await outcomeOf(
        await instances[i % instances.length]!.post("transfer-sol", {
          to: { userId: 10_000 + offset + i },
          amount: "0.001",
          idempotencyKey: `round-end-${offset + i}`,
        }),
      ))),
  );
}

function answeredAll(counts: Record<string, number>, n: number): void {
  const paid = (counts.confirmed ?? 0) + (counts.submitted ?? 0);
  assert.equal(paid, n, `every payout answered confirmed or submitted: ${JSON.stringify(counts)}`);
}

onEachStore(
  "A round end of 500 payouts over two instances: every one answered, none refused",
  async (store) => {
    await using h = await startTxHarness({
      store,
      fund: 1_000_000_000_000n,
      // The spec's answer time and RPC timeout: the burst is judged as production would be.
      timing: { answerWithinMs: 20_000, rpcTimeoutMs: 8_000 },
    });
    const b = await h.instance();
    await h.policy({ maxSolPerTransfer: "1" });
    const counts = await burst(h, [h.a, b], BURST);
    answeredAll(counts, BURST);
    // And: each payout settled so far has its `tx` event, once (moved into the feed in batches)
    const keys = (await h.txEvents()).map((event) => event.key);
    assert.equal(new Set(keys).size, keys.length, "no event twice");
    assert.ok(keys.length >= (counts.confirmed ?? 0), `${keys.length} events`);
    // (A minute later, for the request quota's 600 a minute; the instances' blocks settled, as
    // their timers would 2 s after the burst, here at once: a loaded machine may run them late.)
    for (const instance of [h.a, b]) await instance.ctx.tx.allowances.settle(h.project.id);
    h.a.clock.advance(61_000);
    // Then: the daily quota counted every one of them exactly, across both instances
    const more = await burst(h, [h.a, b], 1_000 - BURST + 20, BURST);
    answeredAll({ confirmed: more.confirmed ?? 0, submitted: more.submitted ?? 0 }, 1_000 - BURST);
    assert.equal(more.daily_tx_quota_exceeded, 20, JSON.stringify(more));
  },
);

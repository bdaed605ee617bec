// A payout's places in the project-wide limits and its request's count in the quota, each taken by
// a round on every store, stay exact (tests/tx/limits_test.ts holds the limits across instances).
import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { type RequestCounts, requestCountsKey } from "../../kv/request_counts.ts";
import {
  okJson,
  onEachStore,
  outcomeOf,
  startTxHarness,
  tally,
  type TxHarness,
} from "../support/tx_harness.ts";

onEachStore(
  "A project's hourly budget passes exactly what fits: 3 SOL, three payouts of 1, nothing past them",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "5", hourlyBudgets: [{ asset: "SOL", amount: "3" }] });
    await h.link(1);
    const pay = async (key: string, amount = "1") =>
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount, idempotencyKey: key });

    for (const key of ["first", "second", "third"]) {
      assert.equal((await okJson(await pay(key))).status, "confirmed");
    }
    const refused = await pay("fourth", "0.000000001");

    assert.equal(refused.status, 429);
    assert.equal((await refused.json()).error.code, "hourly_budget_exceeded");
  },
);

/** Sets the project's request counters to `used` requests this minute and today. */
async function usedThisMinute(h: TxHarness, used: number): Promise<void> {
  const now = h.a.clock.now();
  await h.a.kv.set(
    requestCountsKey(h.project.id),
    {
      minute: Math.floor(now / 60_000),
      minuteCount: used,
      day: Math.floor(now / 86_400_000),
      dayCount: used,
    } satisfies RequestCounts,
  );
}

async function minuteCount(h: TxHarness): Promise<number> {
  return (await h.a.kv.get<RequestCounts>(requestCountsKey(h.project.id))).value!.minuteCount;
}

onEachStore(
  "A payout over the minute's quota is counted and refused, with nothing reserved",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(1);
    const body = (key: string) => ({ to: { userId: 1 }, amount: "1", idempotencyKey: key });
    assert.equal((await okJson(await h.a.post("transfer-sol", body("first")))).status, "confirmed");
    // Given: the project used its 600 requests of this minute (on other instances)
    await usedThisMinute(h, 600);
    // When
    const res = await h.a.post("transfer-sol", body("over"));
    // Then: 429 rate_limited, counted, and nothing reserved for the key
    assert.equal(res.status, 429);
    assert.equal((await res.json()).error.code, "rate_limited");
    assert.equal(await minuteCount(h), 601);
    assert.equal(await getTxRequest(h.a.kv, h.project.id, "over"), null);
  },
);

onEachStore(
  "Payouts on two instances at the minute's last places: exactly the rest pass, every one counted",
  async (store) => {
    await using h = await startTxHarness({ store });
    const b = await h.instance();
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(1);
    const body = (key: string) => ({ to: { userId: 1 }, amount: "0.001", idempotencyKey: key });
    assert.equal((await okJson(await h.a.post("transfer-sol", body("first")))).status, "confirmed");
    // Given: 590 of the minute's 600 used
    await usedThisMinute(h, 590);
    // When: 20 payouts at once, half on each instance
    const outcomes = await Promise.all(
      Array.from(
        { length: 20 },
        async (_, i) =>
          await outcomeOf(await (i % 2 ? b : h.a).post("transfer-sol", body(`last-${i}`))),
      ),
    );
    // Then: 10 through, 10 refused, all 20 counted (leases settled first)
    assert.deepEqual(tally(outcomes), { confirmed: 10, rate_limited: 10 });
    await h.a.ctx.quota.close();
    await b.ctx.quota.close();
    assert.equal(await minuteCount(h), 610);
  },
);

onEachStore(
  "Payouts of a project paying now and then, on two instances at once at its budget's last places: exactly what fits passes",
  async (store) => {
    await using h = await startTxHarness({ store });
    const b = await h.instance();
    await h.policy({ maxSolPerTransfer: "5", hourlyBudgets: [{ asset: "SOL", amount: "3" }] });
    const body = async (key: string) => ({
      to: { address: (await generateKeyPairSigner()).address },
      amount: "1",
      idempotencyKey: key,
    });
    // Given: one of the budget's three places paid (the project's first payout takes a round,
    // which fences the previous version out; the next ones count their places in their own
    // reservations, each instance paying too rarely for blocks)
    const first = await h.a.post("transfer-sol", await body("first"));
    assert.equal((await okJson(first)).status, "confirmed");
    // When: three more at once, two on one instance and one on the other
    const outcomes = await Promise.all(
      [h.a, b, h.a].map(async (instance, i) =>
        await outcomeOf(await instance.post("transfer-sol", await body(`last-${i}`)))
      ),
    );
    // Then: the two places left pass, and nothing past them
    assert.deepEqual(tally(outcomes), { confirmed: 2, hourly_budget_exceeded: 1 });
  },
);

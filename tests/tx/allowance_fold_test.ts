// A quiet project's payout takes its places in its reservation's own commit (lib/tx/allowance_fold.ts):
// no round of its own before it, and the limits and the quota (counted by a quota round, on every
// store) exact all the same (tests/tx/limits_test.ts holds the limits across
// instances, where most payouts are folded).
import assert from "node:assert/strict";
import { allowanceKey } from "../../kv/tx_allowance.ts";
import { getTxRequest, txRequestKey } from "../../kv/tx_requests.ts";
import { type RequestCounts, requestCountsKey } from "../../kv/request_counts.ts";
import { okJson, outcomeOf, startTxHarness, tally, type TxHarness } from "../support/tx_harness.ts";

/** Records, per commit made on `kv`, the keys it writes. */
function recordWrites(kv: Deno.Kv): { commits: string[][]; stop(): void } {
  const commits: string[][] = [];
  const atomic = kv.atomic;
  kv.atomic = () => {
    const op = atomic.call(kv);
    const written: string[] = [];
    const mutate = op.mutate.bind(op);
    op.mutate = (...mutations) => {
      for (const m of mutations) written.push(JSON.stringify(m.key));
      return mutate(...mutations);
    };
    const set = op.set.bind(op);
    op.set = (key, value, options) => {
      written.push(JSON.stringify(key));
      return set(key, value, options);
    };
    const commit = op.commit.bind(op);
    op.commit = () => {
      commits.push(written);
      return commit();
    };
    return op;
  };
  return { commits, stop: () => (kv.atomic = atomic) };
}

Deno.test("A quiet project's payout takes its places in the commit that reserves it, with no round before", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5", hourlyBudgets: [{ asset: "SOL", amount: "3" }] });
  await h.link(1);
  const pay = async (key: string, amount = "1") =>
    await h.a.post("transfer-sol", { to: { userId: 1 }, amount, idempotencyKey: key });
  // Given: the project's first payout (its round fences the previous version's day list)
  assert.equal((await okJson(await pay("first"))).status, "confirmed");

  // When: it pays again, a while later
  const writes = recordWrites(h.a.kv);
  const second = await okJson(await pay("second"));
  writes.stop();

  // Then: the day's ledger and the budget's were written once, by the commit writing the key
  assert.equal(second.status, "confirmed");
  const id = h.project.id;
  const day = JSON.stringify(allowanceKey(id, "day"));
  const budget = JSON.stringify(allowanceKey(id, "asset:SOL"));
  const reservation = JSON.stringify(txRequestKey(id, "second"));
  const ledgerCommits = writes.commits.filter((keys) =>
    keys.includes(day) || keys.includes(budget)
  );
  assert.equal(ledgerCommits.length, 1, JSON.stringify(writes.commits));
  assert.ok(ledgerCommits[0]!.includes(reservation));
  assert.ok(ledgerCommits[0]!.includes(day) && ledgerCommits[0]!.includes(budget));

  // And the budget stays exact: 2 of 3 SOL used, so 1 more fits and nothing past it
  assert.equal((await okJson(await pay("third"))).status, "confirmed");
  const refused = await pay("fourth", "0.000000001");
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).error.code, "hourly_budget_exceeded");
});

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

Deno.test("A quiet project's payout over the minute's quota is counted and refused, with nothing reserved", async () => {
  await using h = await startTxHarness();
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
});

Deno.test("Payouts on two instances at the minute's last places: exactly the rest pass, every one counted", async () => {
  await using h = await startTxHarness({ sharedStore: true });
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
});

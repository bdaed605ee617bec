// A quiet project's payout takes its places in its reservation's own commit (lib/tx/allowance_fold.ts):
// no round of its own before it, and the limits exact all the same (tests/tx/limits_test.ts holds
// the limits across instances, where most payouts are folded).
import assert from "node:assert/strict";
import { allowanceKey } from "../../kv/tx_allowance.ts";
import { txRequestKey } from "../../kv/tx_requests.ts";
import { okJson, startTxHarness } from "../support/tx_harness.ts";

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

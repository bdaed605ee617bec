// An instance killed (SIGKILL) while it holds blocks of a project's limits: the places it held
// stay counted, so the other instances never pass the limit; they refuse at most the unused
// places of its blocks early.
import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import { onEachStore, outcomeOf, startTxHarness } from "../support/tx_harness.ts";
import { startServiceProcess } from "../support/service_runner.ts";

const TEST_SECRET = "test-secret-test-secret-test-secret-0123";
const BUDGET = 30;
// What one crashed instance may strand per scope beyond its payouts (`lib/tx/allowance/allowance.ts`).
const MAX_PREFETCH = 10;

async function pay(url: string, apiKey: string, key: string): Promise<string> {
  const to = (await generateKeyPairSigner()).address;
  const res = await fetch(`${url}/v1/tx/transfer-sol`, {
    method: "POST",
    headers: { "x-api-key": apiKey, "content-type": "application/json" },
    body: JSON.stringify({ to: { address: to }, amount: "1", idempotencyKey: key }),
  });
  return await outcomeOf(res);
}

onEachStore(
  "An instance killed holding blocks of the hourly budget: the others never pass it",
  async (store) => {
    await using h = await startTxHarness({ store, fund: 1_000_000_000_000n });
    await h.policy({
      maxSolPerTransfer: "1",
      hourlyBudgets: [{ asset: "SOL", amount: String(BUDGET) }],
    });
    const doomed = await startServiceProcess({
      KV_PATH: h.kvPath!,
      SECRET: TEST_SECRET,
      RPC_URL_DEVNET: h.chain.rpcUrl,
      RPC_URL_MAINNET: h.chain.rpcUrl,
      PUBLISH_URL: h.standIn.url,
      IDP_URL: "http://127.0.0.1:9/oauth",
    });
    // Given: the doomed instance paid a burst, and holds the blocks it took for it
    const burst = await Promise.all(
      Array.from({ length: 6 }, (_, i) => pay(doomed.url, h.apiKey, `doomed-${i}`)),
    );
    const paidThere = burst.filter((s) => s === "confirmed" || s === "submitted").length;
    assert.equal(paidThere, 6, JSON.stringify(burst));
    // When: it is killed before it settles them, and the others' clocks pass its blocks' ends
    await doomed.kill();
    h.a.clock.advance(10_000);
    const outcomes: string[] = [];
    for (let i = 0; i < BUDGET; i++) {
      const res = await h.a.post("transfer-sol", {
        to: { address: (await generateKeyPairSigner()).address },
        amount: "1",
        idempotencyKey: `survivor-${i}`,
      });
      outcomes.push(await outcomeOf(res));
    }
    // Then: never past the budget; refused early by at most the unused places it held
    const paidHere = outcomes.filter((s) => s === "confirmed" || s === "submitted").length;
    const refused = outcomes.filter((s) => s === "hourly_budget_exceeded").length;
    assert.equal(paidHere + refused, BUDGET, JSON.stringify(outcomes));
    assert.ok(paidThere + paidHere <= BUDGET, `paid ${paidThere} + ${paidHere}`);
    assert.ok(paidHere >= BUDGET - paidThere - MAX_PREFETCH, `paid ${paidHere} here`);
  },
);

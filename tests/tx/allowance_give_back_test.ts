// A place given back to a limit's ledger (a payout whose reservation did not commit after its
// round counted its places as used) is given back once, even when the remote store's answer is
// lost and Deno's client sends the write again.
import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import { outcomeOf, startTxHarness } from "../support/tx_harness.ts";
import { startRemoteStore } from "../support/remote_store.ts";
import type { KvConnectServer } from "../../sandbox/kv_connect/server.ts";
import { txRecipientUsageKey, type UsageWindow } from "../../kv/tx_usage.ts";

/** Waits until the server has handled `n` writes sent again. */
async function resentWrites(server: KvConnectServer, n: number): Promise<void> {
  for (let i = 0; server.calls.resent < n; i++) {
    assert.ok(i < 1_000, "Deno's client never sent the write again");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

Deno.test("A place given back over a remote store whose answer is lost counts once: the budget is never passed", async () => {
  await using store = await startRemoteStore();
  await using h = await startTxHarness({ kvPath: store.url });
  await h.policy({
    maxSolPerTransfer: "1",
    perRecipientPerHour: 1,
    hourlyBudgets: [{ asset: "SOL", amount: "0.03" }],
  });
  const to = (await generateKeyPairSigner()).address;
  const pay = async (key: string, address = to) =>
    await outcomeOf(
      await h.a.post("transfer-sol", {
        to: { address },
        amount: "0.01",
        idempotencyKey: key,
      }),
    );
  // Given: the recipient was paid this hour (its hourly window holds one payout),
  // and a payout refused by the recipient's limit after its round counted its places as used (the
  // project's first payout takes its places from a round, which fences the previous version out),
  // whose give-back of the budget's place is applied, then answered 503 (the client sends it
  // again). The text is the start of that counter's key as the store's key encoding writes it.
  await h.a.kv.set(
    txRecipientUsageKey(h.project.id, to),
    {
      times: [h.a.clock.now()],
      amounts: [],
    } satisfies UsageWindow,
  );
  store.server.faults.unavailableAfterWriteTo =
    `tx_allowance_released\u0000\u0002${h.project.id}\u0000\u0002asset:SOL`;
  assert.equal(await pay("same-recipient"), "recipient_rate_limited");
  await resentWrites(store.server, 1);
  assert.equal(store.server.faults.unavailableAfterWriteTo, null);

  // Then: the budget still holds three payouts, and not four
  const outcomes = [];
  for (let i = 0; i < 4; i++) {
    outcomes.push(await pay(`next-${i}`, (await generateKeyPairSigner()).address));
  }
  assert.deepEqual(outcomes, ["confirmed", "confirmed", "confirmed", "hourly_budget_exceeded"]);
});

// What a grant checks now (the asset, the per-transaction maximum, the policy's cap on what one
// player may hold) and what it leaves to the payment; and the keys of rewards' payments, which no
// payout route may take.
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { okJson, startTxHarness } from "../support/tx_harness.ts";
import { rewardsOf, solReward } from "../support/rewards_harness.ts";
import { heldTotals } from "../../kv/rewards.ts";
import { txRequestKey, type TxRequestRecord } from "../../kv/tx_requests.ts";

Deno.test("grantReward() refuses what the policy refuses at once, and a player's held cap", async () => {
  await using h = await startTxHarness();
  const api = rewardsOf(h);
  // No SOL in the policy yet.
  await assertErrorCode(await api.grant(solReward(81, "a", "0.6")), 403, "sol_transfers_disabled");
  await h.policy({ maxSolPerTransfer: "1", maxHeldSolPerPlayer: "1" });
  await assertErrorCode(await api.grant(solReward(81, "a", "2")), 403, "amount_over_limit");
  await assertErrorCode(await api.grant(solReward(81, "a", "0.0000000001")), 400, "invalid_amount");

  // Given: 0.6 SOL held for the player
  assert.equal((await okJson(await api.grant(solReward(81, "a", "0.6")))).status, "held");
  // When / Then: another 0.5 would pass the cap; another player has a cap of their own
  await assertErrorCode(
    await api.grant(solReward(81, "b", "0.5")),
    403,
    "reward_hold_limit_exceeded",
  );
  assert.equal((await okJson(await api.grant(solReward(82, "c", "0.5")))).status, "held");
  // Once the first is cancelled, it fits; the same key with another body is a conflict
  const cancelled = await okJson(await api.cancel("a"));
  assert.equal(cancelled.status, "cancelled");
  assert.deepEqual(await okJson(await api.cancel("a")), cancelled, "cancelled again: the same");
  assert.equal((await okJson(await api.grant(solReward(81, "b", "0.5")))).status, "held");
  await assertErrorCode(await api.grant(solReward(81, "b", "0.4")), 409, "idempotency_conflict");
  // The project's liabilities: 0.5 + 0.5 SOL held (the cancelled 0.6 given back)
  assert.deepEqual(await heldTotals(h.a.kv, h.project.id), new Map([["sol", 1_000_000_000n]]));
  await assertErrorCode(await api.get("nope"), 404, "not_found");
  await assertErrorCode(await api.cancel("nope"), 404, "not_found");
});

Deno.test("The payout routes refuse the keys of rewards' payments", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(83);
  const res = await h.a.post("transfer-sol", {
    to: { userId: 83 },
    amount: "0.1",
    idempotencyKey: "reward:x",
  });
  const { error } = await assertErrorCode(res, 400, "invalid_request");
  assert.match(error.message, /must not start with reward:/);
});

Deno.test("grantReward() refuses a key whose payment's key a payout already took", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "1" });
  // Given: a payout stored under `reward:old`, as a version before rewards could take it
  await h.link(84);
  const res = await h.a.post("transfer-sol", {
    to: { userId: 84 },
    amount: "0.1",
    idempotencyKey: "k",
  });
  assert.equal(res.status, 200);
  const stored = await h.a.kv.get<TxRequestRecord>(txRequestKey(h.project.id, "k"));
  await h.a.kv.set(txRequestKey(h.project.id, "reward:old"), {
    ...stored.value!,
    key: "reward:old",
  });
  // Then: a reward under `old` would take that payout (the same body) for its own: refused
  await assertErrorCode(
    await rewardsOf(h).grant(solReward(84, "old", "0.1")),
    409,
    "idempotency_conflict",
  );
});

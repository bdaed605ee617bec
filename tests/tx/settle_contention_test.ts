// A route whose settlement keeps losing to concurrent changes (a round end's events on many
// instances) answers `submitted` once its rounds are spent, and the background settles the payout:
// paid once, one `tx` event, the answer never contradicted.
import assert from "node:assert/strict";
import { startRemoteStore } from "../support/remote_store.ts";
import { balanceOf, okJson, startTxHarness } from "../support/tx_harness.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";

Deno.test("A payout whose settlement loses every round answers submitted, and the background confirms it once", async () => {
  // Given: a remote store, a linked player, and every commit that moves a request to `confirmed`
  // losing its checks (the settlement's, whether it records its `tx` event in the feed or as
  // pending; the reservation and the mark move it to `pending` and `submitted`)
  await using store = await startRemoteStore();
  await using h = await startTxHarness({ kvPath: store.url, timing: { confirmWaitMs: 5_000 } });
  await h.policy({ maxSolPerTransfer: "1" });
  const to = await h.link(1);
  const before = await balanceOf(h, to);
  const losing = { text: "confirmed", times: 1_000 };
  store.server.faults.losingChecksTo = losing;

  // When: a payout lands within its confirmation wait
  const answer = await okJson(
    await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "0.01", idempotencyKey: "busy" }),
  );

  // Then: its settlement spent its rounds (100) and the route answered `submitted`, as stored
  assert.equal(answer.status, "submitted", JSON.stringify(answer));
  assert.equal(losing.times, 900);
  assert.equal((await getTxRequest(h.a.kv, h.project.id, "busy"))!.status, "submitted");
  assert.equal(await balanceOf(h, to), before + 10_000_000n);

  // And: once commits go through again, the background settles it confirmed, with one event
  store.server.faults.losingChecksTo = null;
  await h.backgroundCheck();
  const settled = await getTxRequest(h.a.kv, h.project.id, "busy");
  assert.equal(settled!.status, "confirmed");
  assert.equal(settled!.signature, answer.signature);
  const events = (await h.txEvents()).filter((e) => e.key === "busy");
  assert.deepEqual(events.map((e) => e.status), ["confirmed"]);
  assert.equal(await balanceOf(h, to), before + 10_000_000n);
});

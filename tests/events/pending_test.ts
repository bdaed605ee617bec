// A settlement writes its `tx` event to the project's pending events and moves it into the feed
// right after; when that move cannot commit (its instance gone, or the store refusing), the
// minute sweep of any instance moves it later: the event reaches the feed exactly once. A route
// does not wait for that move past its deadline: the settlement is committed, and it answers.
import assert from "node:assert/strict";
import { startRemoteStore } from "../support/remote_store.ts";
import { okJson, startTxHarness, type TxHarness } from "../support/tx_harness.ts";
import { runSweeps } from "../../jobs/sweeps.ts";
import { listFeedEvents } from "../../kv/event_feed.ts";
import { movePendingEvents } from "../../lib/events/pending.ts";

Deno.test("A settlement's event its instance could not move into the feed is moved by another instance's sweep, once", async () => {
  // Given: two instances on a remote store, a linked player, and every commit that takes feed ids
  // losing its checks (the settlement itself takes none)
  await using store = await startRemoteStore();
  await using h = await startTxHarness({ kvPath: store.url, timing: { confirmWaitMs: 5_000 } });
  const b = await h.instance();
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(1);
  const losing = { text: "event_seqs", times: 1_000 };
  store.server.faults.losingChecksTo = losing;

  // When: a payout lands within its confirmation wait
  const answer = await okJson(
    await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "0.01", idempotencyKey: "late" }),
  );

  // Then: it is answered confirmed, its settlement having lost its first round (recording its
  // event in the feed) and its move of the pending event all of its 100, and the feed is empty
  assert.equal(answer.status, "confirmed", JSON.stringify(answer));
  assert.equal(losing.times, 899);
  assert.deepEqual(await feedKeys(h), []);

  // And: a sweep within 30 s leaves it to its instance
  store.server.faults.losingChecksTo = null;
  assert.equal((await runSweeps(b.ctx)).pending_events, 0);

  // And: after 30 s the other instance's sweep moves it, and its event is delivered, once
  h.a.clock.advance(31_000);
  assert.equal((await runSweeps(b.ctx)).pending_events, 1);
  assert.equal((await runSweeps(h.a.ctx)).pending_events, 0);
  assert.deepEqual(await feedKeys(h), [["tx", "late"]]);
  const delivered = (await h.txEvents()).filter((e) => e.key === "late");
  assert.deepEqual(delivered.map((e) => e.status), ["confirmed"]);
});

Deno.test("A payout whose settled event cannot be moved into the feed is answered by its deadline, and the event reaches the feed once later", async () => {
  // Given: a store 30 ms away (a move's round, two reads and a commit one after the other, takes
  // 90 ms or more: its 100 rounds 9 s), a 5 s answer deadline, two instances, a linked player,
  // and every commit that takes feed ids losing its checks
  const answerWithinMs = 5_000;
  await using store = await startRemoteStore({ latencyMs: 30 });
  await using h = await startTxHarness({
    kvPath: store.url,
    timing: { answerWithinMs, confirmWaitMs: 2_000 },
  });
  const b = await h.instance();
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(1);
  store.server.faults.losingChecksTo = { text: "event_seqs", times: 1_000 };

  // When: a payout lands, its settlement writing its event to the pending events (its first
  // round, recording it in the feed, lost) and its move into the feed losing round after round
  const started = performance.now();
  const res = await h.a.post("transfer-sol", {
    to: { userId: 1 },
    amount: "0.01",
    idempotencyKey: "unmoved",
  });
  const ms = performance.now() - started;

  // Then: it is answered confirmed within its deadline, without waiting for the move
  const answer = await okJson(res);
  assert.equal(answer.status, "confirmed", JSON.stringify(answer));
  assert.ok(ms <= answerWithinMs, `answered after ${Math.round(ms)} ms`);

  // And: once the store accepts the commits, the move still running and another instance's sweep
  // (after 30 s) move the event into the feed together, once, and it is delivered once
  store.server.faults.losingChecksTo = null;
  store.server.faults.latencyMs = 0;
  h.a.clock.advance(31_000);
  await runSweeps(b.ctx);
  await movePendingEvents(h.a.ctx, h.project.id);
  assert.deepEqual(await feedKeys(h), [["tx", "unmoved"]]);
  const delivered = (await h.txEvents()).filter((e) => e.key === "unmoved");
  assert.deepEqual(delivered.map((e) => e.status), ["confirmed"]);
});

// The project's feed as [type, key] pairs.
async function feedKeys(h: TxHarness): Promise<[string, string | null][]> {
  const { events } = await listFeedEvents(h.a.kv, h.project.id, {
    after: 0,
    limit: 100,
    types: null,
    now: h.a.clock.now(),
    maxDecoded: 100,
  });
  return events.map((e) => [e.type, "key" in e ? e.key : null]);
}

// Every row of the spec's transaction state table, against the sandbox cluster.
import assert from "node:assert/strict";
import { call } from "../support/test_app.ts";
import { type Signature } from "@solana/kit";
import { jobKey, listJobs } from "../../kv/jobs.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { runSweeps } from "../../jobs/sweeps.ts";
import { ABANDONED_ERROR, EXPIRED_ERROR } from "../../lib/tx/lifecycle/result.ts";
import { READ_TRIES } from "../../lib/tx/rpc/chain_errors.ts";
import {
  CRASH_BODY,
  finalizedHeight,
  finalizePast,
  okJson,
  onEachStore,
  startTxHarness,
  stepWhile,
  type TxHarness,
  withAttemptKilledBeforeSigning,
  withKilledAttempt,
} from "../support/tx_harness.ts";

onEachStore(
  "POST /v1/tx/transfer-sol is pending while it waits, then confirmed with one tx event",
  async (store) => {
    await using h = await startTxHarness({ store, autoAdvance: false });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(42);
    h.chain.faults.delayLanding(1, { slots: 3 });

    // When: the request is in flight and the cluster does not move
    const inFlight = h.a.post("transfer-sol", {
      to: { userId: 42 },
      amount: "1.5",
      idempotencyKey: "p1",
    });
    let seen: Record<string, unknown> | null = null;
    for (let i = 0; i < 500 && !seen?.signature; i++) {
      const res = await h.a.status("p1");
      if (res.status === 200) seen = await res.json();
      else await res.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    // Then: the stored attempt is pending, already signed
    assert.equal(seen?.status, "pending");
    const result = await okJson(await stepWhile(h.chain, inFlight));
    assert.deepEqual(result, {
      idempotencyKey: "p1",
      kind: "transfer-sol",
      status: "confirmed",
      signature: seen.signature,
      recipient: to,
      error: null,
    });
    assert.equal((await h.rpc.getBalance(to).send()).value, 1_500_000_000n);
    // Settled by the route: its background check job is gone with it.
    assert.deepEqual((await listJobs(h.a.kv)).filter((j) => j.payload.type === "tx_confirm"), []);
    assert.deepEqual(await h.txEvents(), [{
      v: 1,
      type: "tx",
      id: "1",
      key: "p1",
      kind: "transfer-sol",
      status: "confirmed",
      signature: seen.signature,
      userId: 42,
    }]);
    // The same event, under the same id, in the project's feed.
    const feed = await (await call(h.a.app, "/v1/events", { apiKey: h.apiKey })).json();
    assert.deepEqual(
      feed.events.map((e: Record<string, unknown>) => [e.id, e.type, e.key, e.status]),
      [
        ["1", "tx", "p1", "confirmed"],
      ],
    );
  },
);

onEachStore(
  "POST /v1/tx/transfer-sol answers submitted after the wait; the durable check confirms it",
  async (store) => {
    await using h = await startTxHarness({
      store,
      autoAdvance: false,
      timing: { confirmWaitMs: 150 },
    });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(7);
    h.chain.faults.delayLanding(1, { slots: 5 });

    // When
    const result = await okJson(
      await h.a.post("transfer-sol", { to: { address: to }, amount: "2", idempotencyKey: "slow" }),
    );

    // Then: submitted, and nothing is final until the background check runs
    assert.equal(result.status, "submitted");
    assert.equal(typeof result.signature, "string");
    assert.deepEqual(await h.txEvents(), []);
    h.chain.advanceSlots(10);
    assert.equal((await okJson(await h.a.status("slow"))).status, "submitted");
    await h.backgroundCheck();
    const after = await okJson(await h.a.status("slow"));
    assert.equal(after.status, "confirmed");
    const events = await h.txEvents();
    assert.equal(events.length, 1);
    assert.equal(events[0]?.status, "confirmed");
    // The address is player 7's linked wallet, so the event names the player.
    assert.equal(events[0]?.userId, 7);
  },
);

onEachStore(
  "POST /v1/tx/transfer-sol rebroadcasts the same signed bytes when the first send is lost",
  async (store) => {
    await using h = await startTxHarness({ store, proxy: true });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(1);
    h.proxy.failNext("sendTransaction", 1);

    const result = await okJson(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1", idempotencyKey: "lost" }),
    );

    assert.equal(result.status, "confirmed");
    assert.ok((h.proxy.counts().sendTransaction ?? 0) >= 2);
    const landed = await h.rpc.getSignatureStatuses([result.signature as Signature], {
      searchTransactionHistory: true,
    }).send();
    assert.equal(landed.value[0]?.err, null);
    assert.equal((await h.rpc.getBalance(to).send()).value, 1_000_000_000n);
  },
);

onEachStore(
  "POST /v1/tx/transfer-sol with the RPC down at step 14: 502 rpc_error recorded as failed, then the same key succeeds",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(3);
    const body = { to: { userId: 3 }, amount: "1", idempotencyKey: "outage" };
    h.chain.faults.failHttp(READ_TRIES, { status: 503 });

    // When
    const res = await h.a.post("transfer-sol", body);

    // Then
    assert.equal(res.status, 502);
    const error = await res.json();
    assert.equal(error.error.code, "rpc_error");
    const stored = await okJson(await h.a.status("outage"));
    assert.equal(stored.status, "failed");
    assert.equal(stored.signature, null);
    assert.match(String(stored.error), /^Could not build the transaction: /);

    // When: retried with the same key and body
    const retry = await okJson(await h.a.post("transfer-sol", body));

    // Then: a new attempt, with its own event
    assert.equal(retry.status, "confirmed");
    // Delivery order between events is not guaranteed.
    const events = (await h.txEvents()).sort((x, y) =>
      String(y.status).localeCompare(String(x.status))
    );
    assert.deepEqual(events.map((e) => [e.status, e.signature ?? null]), [
      ["failed", null],
      ["confirmed", retry.signature],
    ]);
    assert.match(String(events[0]?.error), /^Could not build the transaction: /);
    assert.equal((await getTxRequest(h.a.kv, h.project.id, "outage"))?.attempt, 2);
  },
);

Deno.test("POST /v1/tx/transfer-sol tries the blockhash again after a passing 503, within its deadline", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const to = await h.link(3);
  h.chain.faults.failHttp(READ_TRIES - 1, { status: 503 });

  // When
  const result = await okJson(
    await h.a.post("transfer-sol", { to: { userId: 3 }, amount: "1", idempotencyKey: "blip" }),
  );

  // Then
  assert.equal(result.status, "confirmed");
  assert.equal((await h.rpc.getBalance(to).send()).value, 1_000_000_000n);
});

Deno.test("POST /v1/tx/transfer-sol rejected in simulation answers 200 failed with the coded -32002 error", async () => {
  await using h = await startTxHarness({ fund: 1_000_000_000n });
  await h.policy({ maxSolPerTransfer: "100" });
  const to = await h.link(5);

  const result = await okJson(
    await h.a.post("transfer-sol", { to: { userId: 5 }, amount: "50", idempotencyKey: "broke" }),
  );

  assert.equal(result.status, "failed");
  assert.equal(typeof result.signature, "string");
  assert.match(
    String(result.error),
    /^Solana error #-32002; Decode this error by running `npx @solana\/errors decode -- -32002/,
  );
  assert.equal((await h.rpc.getBalance(to).send()).value, 0n);
  const events = await h.txEvents();
  assert.equal(events.length, 1);
  assert.equal(events[0]?.status, "failed");
  assert.equal(events[0]?.error, result.error);
});

/** Sends two transfers that each pass simulation but cannot both land; returns both answers. */
async function doubleSpend(h: TxHarness, step: boolean): Promise<Record<string, unknown>[]> {
  await h.policy({ maxSolPerTransfer: "10" });
  await h.link(11);
  await h.link(12);
  h.chain.faults.delayLanding(2, { slots: 2 });
  const both = Promise.all([
    h.a.post("transfer-sol", { to: { userId: 11 }, amount: "0.6", idempotencyKey: "a" }),
    h.a.post("transfer-sol", { to: { userId: 12 }, amount: "0.6", idempotencyKey: "b" }),
  ]);
  for (let i = 0; i < 1000 && h.chain.faults.snapshot().heldTransactions.length < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.equal(h.chain.faults.snapshot().heldTransactions.length, 2);
  return await Promise.all((step ? await stepWhile(h.chain, both) : await both).map(okJson));
}

Deno.test("POST /v1/tx/transfer-sol that lands and fails on-chain within the wait answers failed with the on-chain error", async () => {
  await using h = await startTxHarness({ autoAdvance: false, fund: 1_000_000_000n });
  const answers = await doubleSpend(h, true);
  const statuses = answers.map((a) => a.status).sort();
  assert.deepEqual(statuses, ["confirmed", "failed"]);
  const failed = answers.find((a) => a.status === "failed")!;
  assert.equal(failed.error, '{"InstructionError":[0,{"Custom":1}]}');
  const events = await h.txEvents();
  assert.deepEqual(events.map((e) => e.status).sort(), ["confirmed", "failed"]);
});

onEachStore(
  "A submitted transaction that lands and fails is marked failed by the background check",
  async (store) => {
    await using h = await startTxHarness({
      store,
      autoAdvance: false,
      fund: 1_000_000_000n,
      timing: { confirmWaitMs: 100 },
    });
    const answers = await doubleSpend(h, false);
    assert.deepEqual(answers.map((a) => a.status), ["submitted", "submitted"]);
    h.chain.advanceSlots(5);
    await h.backgroundCheck();
    const after = await Promise.all(["a", "b"].map(async (k) => await okJson(await h.a.status(k))));
    assert.deepEqual(after.map((a) => a.status).sort(), ["confirmed", "failed"]);
    assert.equal(
      after.find((a) => a.status === "failed")!.error,
      '{"InstructionError":[0,{"Custom":1}]}',
    );
    assert.equal((await h.txEvents()).length, 2);
  },
);

onEachStore(
  "A never-landing transaction is failed as expired only once expiry is proven on the finalized chain",
  async (store) => {
    await using h = await startTxHarness({
      store,
      autoAdvance: false,
      timing: { confirmWaitMs: 100 },
    });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(9);
    h.chain.faults.neverLand(1);

    const result = await okJson(
      await h.a.post("transfer-sol", { to: { userId: 9 }, amount: "1", idempotencyKey: "lost" }),
    );
    assert.equal(result.status, "submitted");
    const signed = (await getTxRequest(h.a.kv, h.project.id, "lost"))!.signed!;

    // Given: the finalized chain exactly 32 blocks past the last valid height
    finalizePast(h, signed, 32);
    assert.equal(finalizedHeight(h), Number(signed.lastValidBlockHeight) + 32);
    await h.backgroundCheck();
    // Then: not proven yet
    assert.equal((await okJson(await h.a.status("lost"))).status, "submitted");

    // When: one more finalized block
    h.chain.advanceSlots(1);
    await h.backgroundCheck();

    // Then
    const after = await okJson(await h.a.status("lost"));
    assert.equal(after.status, "failed");
    assert.equal(after.error, EXPIRED_ERROR);
    assert.equal(after.signature, result.signature);
    assert.equal((await h.rpc.getBalance(to).send()).value, 0n);
    const events = await h.txEvents();
    assert.equal(events.length, 1);
    assert.equal(events[0]?.error, EXPIRED_ERROR);
  },
);

onEachStore(
  "A process killed between reservation and signing leaves an attempt the sweep marks abandoned, with no event",
  async (store) => {
    // Given: instance "doomed" reserved the key, hung reaching the RPC, and died
    await withAttemptKilledBeforeSigning(async (h, settleDeadRequest) => {
      // When: the key is swept after the abandonment delay
      assert.equal((await okJson(await h.a.status("crash"))).status, "pending");
      await runSweeps(h.a.ctx);
      await h.txEvents();
      assert.equal((await okJson(await h.a.status("crash"))).status, "pending");
      h.a.clock.advance(30_000);
      await runSweeps(h.a.ctx);
      h.a.clock.advance(30_000);
      const events = await h.txEvents();
      await settleDeadRequest();

      // Then
      const swept = await okJson(await h.a.status("crash"));
      assert.deepEqual([swept.status, swept.signature, swept.error], [
        "failed",
        null,
        ABANDONED_ERROR,
      ]);
      assert.deepEqual(events, []);
      const feed = await (await call(h.a.app, "/v1/events", { apiKey: h.apiKey })).json();
      assert.deepEqual(feed.events, [], "nor an event in the feed");
      // And the same request starts a new attempt that goes through.
      const retry = await okJson(await h.a.post("transfer-sol", CRASH_BODY));
      assert.equal(retry.status, "confirmed");
      assert.deepEqual((await h.txEvents()).map((e) => e.status), ["confirmed"]);
    }, store);
  },
);

onEachStore(
  "A single request killed while its transaction is built, before its reservation, leaves its key unused and the same request pays once",
  async (store) => {
    // Given: instance "doomed" checked the request and hung reaching the RPC for a blockhash
    // (a single request signs before it reserves), and died
    await withKilledAttempt({ body: CRASH_BODY, heldAt: "getLatestBlockhash" }, async (h, dead) => {
      // Then: nothing was stored for the key, so nothing can be sent for it
      assert.equal(await getTxRequest(h.a.kv, h.project.id, "crash"), null);
      const unknown = await h.a.status("crash");
      assert.equal(unknown.status, 404);
      await unknown.body?.cancel();

      // When: the same request comes again
      const paid = await okJson(await h.a.post("transfer-sol", CRASH_BODY));
      await dead.settle();

      // Then: it pays once
      assert.equal(paid.status, "confirmed");
      assert.equal((await h.rpc.getBalance(dead.to).send()).value, 1_000_000_000n);
      assert.deepEqual((await h.txEvents()).map((e) => e.signature), [paid.signature]);
    }, store);
  },
);

onEachStore(
  "A process killed after storing the signed transaction: the sweep checks the signature and sends the stored bytes",
  async (store) => {
    await withKilledAttempt({
      body: { to: { userId: 22 }, amount: "1", idempotencyKey: "signed-then-crash" },
      heldAt: "sendTransaction",
      reachesChain: true,
    }, async (h, dead) => {
      const stored = await okJson(await h.a.status("signed-then-crash"));
      assert.equal(stored.status, "pending");
      assert.equal(typeof stored.signature, "string");

      // When: the sweep runs after the abandonment delay
      h.a.clock.advance(30_000);
      let after = stored;
      for (let round = 0; round < 200 && after.status !== "confirmed"; round++) {
        await runSweeps(h.a.ctx);
        await h.backgroundCheck();
        after = await okJson(await h.a.status("signed-then-crash"));
        assert.notEqual(after.status, "failed");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      await dead.settle();

      // Then: the stored bytes landed, once
      assert.equal(after.status, "confirmed");
      assert.equal(after.signature, stored.signature);
      assert.equal((await h.rpc.getBalance(dead.to).send()).value, 1_000_000_000n);
      assert.deepEqual((await h.txEvents()).map((e) => e.signature), [stored.signature]);
    }, store);
  },
);

onEachStore(
  "The 30-second sweep, started by the cron's sweeps, settles a submitted request whose check job is gone",
  async (store) => {
    await using h = await startTxHarness({
      store,
      autoAdvance: false,
      timing: { confirmWaitMs: 50 },
    });
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(1);
    h.chain.faults.delayLanding(1, { slots: 3 });
    const sent = await okJson(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1", idempotencyKey: "swept" }),
    );
    assert.equal(sent.status, "submitted");
    const record = await getTxRequest(h.a.kv, h.project.id, "swept");
    await h.a.kv.delete(jobKey(record!.checkJobId!));
    h.chain.advanceSlots(5);

    // When: the minute cron runs its sweeps, and the worker runs what is due
    await runSweeps(h.a.ctx);
    await h.txEvents();

    // Then: the sweep confirmed it, and its loop is due again 30 s later
    assert.equal((await okJson(await h.a.status("swept"))).status, "confirmed");
    const loop = (await listJobs(h.a.kv)).find((j) => j.payload.type === "tx_sweep");
    assert.equal(loop?.runAt, h.a.clock.now() + 30_000);
    assert.equal((await h.txEvents()).length, 1);
  },
);

// The money path under faults (issue 11): no `failed` while a copy can still land, retries only
// of proven-dead attempts, expiry proofs that survive a pruned node, quick recovery after a crash,
// and a route that answers in time whatever the RPC does.
import assert from "node:assert/strict";
import { type Address, address, type Signature } from "@solana/kit";
import { getTxRequest, txRequestKey, type TxRequestRecord } from "../../kv/tx_requests.ts";
import { ensureTxSweepLoop } from "../../lib/tx/follow/sweep.ts";
import { startService } from "../../service.ts";
import { sweepUnsettledTx } from "../../lib/tx/follow/sweep.ts";
import { ABANDONED_ERROR, EXPIRED_ERROR } from "../../lib/tx/lifecycle/result.ts";
import {
  balanceOf,
  CRASH_BODY,
  finalizePast,
  type JsonRpcError,
  okJson,
  onEachStore,
  startHoldingProxy,
  startTxHarness,
  stepWhile,
  type TxHarness,
  withAttemptKilledBeforeSigning,
  withKilledAttempt,
} from "../support/tx_harness.ts";
import { testConfig } from "../support/test_app.ts";

const SYSTEM_PROGRAM = address("11111111111111111111111111111111");

function setLamports(h: TxHarness, wallet: Address, lamports: bigint): void {
  h.chain.setAccount(wallet, { lamports, owner: SYSTEM_PROGRAM, data: new Uint8Array() });
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !condition(); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  assert.ok(condition());
}

/** A node's -32002 preflight answer with this transaction error. */
function preflightRefusal(err: string, message: string): JsonRpcError {
  return {
    code: -32002,
    message: `Transaction simulation failed: ${message}`,
    data: { err, logs: [], accounts: null, unitsConsumed: 0, returnData: null },
  };
}

onEachStore(
  "A resend refused in preflight while the first copy is in flight never settles failed, and a retry pays nothing more",
  async (store) => {
    await using h = await startTxHarness({ store, autoAdvance: false, fund: 1_000_000_000n });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(1);
    const body = { to: { userId: 1 }, amount: "0.6", idempotencyKey: "drained" };
    h.chain.faults.delayLanding(1, { slots: 20 });

    // Given: the first send was accepted and the copy is held by the cluster
    const inFlight = h.a.post("transfer-sol", body);
    await waitFor(() => h.chain.faults.snapshot().heldTransactions.length === 1);
    // And another payout drains the wallet for a moment
    setLamports(h, h.wallet!, 1_000_000n);

    // When: the sweep looks at the attempt (its resend would fail preflight for lack of funds)
    await sweepUnsettledTx(h.a.ctx);
    // Then: the attempt is not failed, and a retry with the key sends nothing new
    assert.notEqual((await okJson(await h.a.status("drained"))).status, "failed");
    setLamports(h, h.wallet!, 1_000_000_000n);
    const again = await okJson(await h.a.post("transfer-sol", body));
    assert.notEqual(again.status, "failed");

    // When: the held copy lands
    const answered = await okJson(await stepWhile(h.chain, inFlight));
    let after = answered;
    for (let i = 0; i < 20 && after.status !== "confirmed"; i++) {
      h.chain.advanceSlots(5);
      await h.backgroundCheck();
      after = await okJson(await h.a.status("drained"));
    }

    // Then: paid exactly once, and the key says so
    assert.equal(after.status, "confirmed");
    assert.equal(await balanceOf(h, to), 600_000_000n);
    assert.equal((await getTxRequest(h.a.kv, h.project.id, "drained"))?.attempt, 1);
  },
);

onEachStore(
  "A background resend refused in preflight after an unclear first send settles nothing; the copy lands once",
  async (store) => {
    await using h = await startTxHarness({
      store,
      autoAdvance: false,
      fund: 1_000_000_000n,
      // The route does not resend within its short wait.
      timing: { confirmWaitMs: 100, rebroadcastMs: 10_000 },
      proxy: true,
    });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(9);
    // Given: the node forwards the first send but answers an internal error, and the cluster holds
    // the copy
    h.chain.faults.delayLanding(1, { slots: 30 });
    h.proxy.lieNext("sendTransaction", 1, { code: -32603, message: "Internal error" });
    const sent = await okJson(
      await h.a.post("transfer-sol", { to: { userId: 9 }, amount: "0.6", idempotencyKey: "held" }),
    );
    assert.equal(sent.status, "submitted");
    assert.equal(h.chain.faults.snapshot().heldTransactions.length, 1);

    // When: the wallet is drained and the background check resends with preflight
    setLamports(h, h.wallet!, 1_000_000n);
    h.a.clock.advance(60_000);
    await h.txEvents();

    // Then: the refusal is only logged
    assert.equal((await okJson(await h.a.status("held"))).status, "submitted");

    // When: funds are back and the held copy lands
    setLamports(h, h.wallet!, 1_000_000_000n);
    h.chain.advanceSlots(35);
    await h.backgroundCheck();

    // Then
    assert.equal((await okJson(await h.a.status("held"))).status, "confirmed");
    assert.equal(await balanceOf(h, to), 600_000_000n);
  },
);

Deno.test("A first send answered BlockhashNotFound or AlreadyProcessed is followed like an unclear answer, not failed", async (t) => {
  for (
    const [name, refusal] of [
      ["BlockhashNotFound", preflightRefusal("BlockhashNotFound", "Blockhash not found")],
      [
        "AlreadyProcessed",
        preflightRefusal("AlreadyProcessed", "This transaction has already been processed"),
      ],
    ] as const
  ) {
    await t.step(name, async () => {
      await using h = await startTxHarness({
        proxy: true,
      });
      await h.policy({ maxSolPerTransfer: "5" });
      const to = await h.link(2);
      // Given: a node that forwards the transaction but answers a preflight refusal
      h.proxy.lieNext("sendTransaction", 1, refusal);

      // When
      const result = await okJson(
        await h.a.post("transfer-sol", { to: { userId: 2 }, amount: "1", idempotencyKey: name }),
      );

      // Then: the forwarded copy is followed to its landing
      assert.equal(result.status, "confirmed", JSON.stringify(result));
      assert.equal(await balanceOf(h, to), 1_000_000_000n);
    });
  }
});

onEachStore(
  "A retry of a failed key whose earlier attempt landed confirms the key with that signature and sends nothing",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(3);
    const body = { to: { userId: 3 }, amount: "1", idempotencyKey: "landed" };
    const first = await okJson(await h.a.post("transfer-sol", body));
    assert.equal(first.status, "confirmed");
    await h.txEvents();
    // Given: the key was recorded failed although its transaction landed (an older version's record)
    const key = txRequestKey(h.project.id, "landed");
    const stored = (await h.a.kv.get<TxRequestRecord>(key)).value!;
    await h.a.kv.set(key, { ...stored, status: "failed", error: "Rejected on resend" });

    // When
    const retry = await okJson(await h.a.post("transfer-sol", body));

    // Then
    assert.equal(retry.status, "confirmed");
    assert.equal(retry.signature, first.signature);
    assert.equal(await balanceOf(h, to), 1_000_000_000n);
    assert.equal((await getTxRequest(h.a.kv, h.project.id, "landed"))?.attempt, 1);
  },
);

onEachStore(
  "A retried key keeps every earlier attempt's signature and blockhash validity",
  async (store) => {
    await using h = await startTxHarness({ store, fund: 100_000_000n });
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(4);
    const body = { to: { userId: 4 }, amount: "1", idempotencyKey: "twice" };
    const first = await okJson(await h.a.post("transfer-sol", body));
    assert.equal(first.status, "failed");
    const firstRecord = (await getTxRequest(h.a.kv, h.project.id, "twice"))!;
    await h.chain.airdrop(h.wallet!, 5_000_000_000n);
    h.chain.advanceSlots(2);

    const retry = await okJson(await h.a.post("transfer-sol", body));

    assert.equal(retry.status, "confirmed");
    const record = (await getTxRequest(h.a.kv, h.project.id, "twice"))!;
    assert.equal(record.attempt, 2);
    assert.deepEqual(record.previous, [{
      attempt: 1,
      attemptId: firstRecord.attemptId,
      signature: first.signature,
      blockhash: firstRecord.signed!.blockhash,
      lastValidBlockHeight: firstRecord.signed!.lastValidBlockHeight,
      error: first.error,
    }]);
  },
);

onEachStore(
  "Expiry is not declared while the node's history does not cover the attempt; a pruned landing is confirmed later",
  async (store) => {
    await using h = await startTxHarness({
      store,
      autoAdvance: false,
      timing: { confirmWaitMs: 100 },
    });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(5);
    h.chain.faults.delayLanding(1, { slots: 5 });
    const result = await okJson(
      await h.a.post("transfer-sol", { to: { userId: 5 }, amount: "1", idempotencyKey: "pruned" }),
    );
    assert.equal(result.status, "submitted");
    const signed = (await getTxRequest(h.a.kv, h.project.id, "pruned"))!.signed!;

    // Given: it landed, then the node lost its history from after the landing
    h.chain.advanceSlots(6);
    assert.equal(await balanceOf(h, to), 1_000_000_000n);
    h.chain.faults.pruneHistory(h.chain.clock().slot);
    // And the finalized chain is well past the expiry margin
    finalizePast(h, signed, 40);

    // When
    await h.backgroundCheck();
    await sweepUnsettledTx(h.a.ctx);

    // Then: not failed, since nothing proves it did not land
    assert.equal((await okJson(await h.a.status("pruned"))).status, "submitted");

    // When: a node with the whole history answers again
    h.chain.faults.clear();
    await h.backgroundCheck();

    // Then
    const after = await okJson(await h.a.status("pruned"));
    assert.equal(after.status, "confirmed");
    assert.notEqual(after.error, EXPIRED_ERROR);
  },
);

onEachStore(
  "An attempt whose instance died before signing is abandoned within 30 s of the death",
  async (store) => {
    await withAttemptKilledBeforeSigning(async (h, settleDeadRequest) => {
      // When: 30 s pass after the death (only the worker runs: no minute cron, no sweep)
      h.a.clock.advance(30_000);
      await h.txEvents();
      await settleDeadRequest();

      // Then
      const swept = await okJson(await h.a.status("crash"));
      assert.deepEqual([swept.status, swept.error], ["failed", ABANDONED_ERROR]);
      assert.equal((await okJson(await h.a.post("transfer-sol", CRASH_BODY))).status, "confirmed");
    }, store);
  },
);

onEachStore(
  "An instance that starts settles a signed attempt already on chain at once",
  async (store) => {
    await withKilledAttempt({
      // Given: the 30 s sweep loop just ran
      before: async (h) => {
        await ensureTxSweepLoop(h.a.ctx);
        await h.txEvents();
      },
      // And an instance sent a transfer, then died while following it
      body: { to: { userId: 22 }, amount: "1", idempotencyKey: "restart" },
      heldAt: "getSignatureStatuses",
      reachesChain: true,
    }, async (h, dead) => {
      await waitFor(() => h.chain.faults.snapshot().heldTransactions.length === 0);
      assert.equal(await balanceOf(h, dead.to), 1_000_000_000n);

      // When: an instance starts on the store
      const kv = await Deno.openKv(h.kvPath!);
      const service = await startService({
        kv,
        clock: h.a.clock,
        hostname: "127.0.0.1",
        config: testConfig({
          port: 0,
          kvPath: h.kvPath!,
          rpcUrls: { devnet: h.chain.rpcUrl, mainnet: h.chain.rpcUrl },
        }),
      });
      try {
        let status = "";
        for (let i = 0; i < 400 && status !== "confirmed"; i++) {
          await new Promise((resolve) => setTimeout(resolve, 5));
          status = (await getTxRequest(h.a.kv, h.project.id, "restart"))!.status;
        }
        // Then: confirmed without waiting for the dead instance's lease or the next sweep
        assert.equal(status, "confirmed");
      } finally {
        await service.close();
        kv.close();
      }
      await dead.settle();
    }, store);
  },
);

Deno.test("A transaction route answers within its deadline whatever the RPC does", async (t) => {
  const timing = { answerWithinMs: 1_500, rpcTimeoutMs: 10_000, confirmWaitMs: 3_000 };
  await t.step(
    "a node that never answers the send: submitted, followed in the background",
    async () => {
      await using h = await startTxHarness({
        proxy: true,
        timing,
      });
      await h.policy({ maxSolPerTransfer: "5" });
      await h.link(6);
      h.proxy.hold("sendTransaction");
      const started = performance.now();
      const result = await okJson(
        await h.a.post("transfer-sol", { to: { userId: 6 }, amount: "1", idempotencyKey: "slow" }),
      );
      assert.ok(performance.now() - started < 6_000, `${performance.now() - started} ms`);
      assert.equal(result.status, "submitted");
      assert.equal(typeof result.signature, "string");
      h.proxy.release();
    },
  );
  await t.step("a node that never answers the blockhash: 502 rpc_error, nothing sent", async () => {
    await using h = await startTxHarness({
      proxy: true,
      timing,
    });
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(6);
    h.proxy.hold("getLatestBlockhash");
    const started = performance.now();
    const res = await h.a.post("transfer-sol", {
      to: { userId: 6 },
      amount: "1",
      idempotencyKey: "stuck",
    });
    assert.ok(performance.now() - started < 6_000, `${performance.now() - started} ms`);
    assert.equal(res.status, 502);
    assert.equal((await res.json()).error.code, "rpc_error");
    h.proxy.release();
  });
});

Deno.test("The sweep reads the statuses of many attempts in one getSignatureStatuses call", async () => {
  await using h = await startTxHarness({
    autoAdvance: false,
    timing: { confirmWaitMs: 50 },
    proxy: true,
  });
  await h.policy({ maxSolPerTransfer: "5" });
  h.chain.faults.delayLanding(3, { slots: 3 });
  const sent = await Promise.all([1, 2, 3].map(async (i) =>
    await okJson(
      await h.a.post("transfer-sol", {
        to: { address: await h.link(30 + i) },
        amount: "1",
        idempotencyKey: `many-${i}`,
      }),
    )
  ));
  assert.deepEqual(sent.map((s) => s.status), ["submitted", "submitted", "submitted"]);
  h.chain.advanceSlots(5);
  // (A call of the routes' last poll may still be on its way: not the sweep's.)
  await h.a.ctx.tx.statuses.idle();
  const before = h.proxy.counts().getSignatureStatuses ?? 0;

  await sweepUnsettledTx(h.a.ctx);

  assert.equal((h.proxy.counts().getSignatureStatuses ?? 0) - before, 1);
  for (const s of sent) {
    const record = await getTxRequest(h.a.kv, h.project.id, String(s.idempotencyKey));
    assert.equal(record?.status, "confirmed");
    assert.equal(record?.signature, s.signature as Signature);
  }
});

Deno.test("The background check of a submitted attempt runs every 1.5 s", async () => {
  let proxy: ReturnType<typeof startHoldingProxy> | null = null;
  try {
    await using h = await startTxHarness({
      store: "file",
      autoAdvance: false,
      timing: { confirmWaitMs: 50 },
    });
    proxy = startHoldingProxy(h.chain.rpcUrl);
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(40);
    // Given: a submitted transfer that never lands, on a cluster that stands still
    h.chain.faults.neverLand(1);
    const sent = await okJson(
      await h.a.post("transfer-sol", { to: { userId: 40 }, amount: "1", idempotencyKey: "pace" }),
    );
    assert.equal(sent.status, "submitted");

    // When: an instance runs its worker on the real clock for a while
    const kv = await Deno.openKv(h.kvPath!);
    const service = await startService({
      kv,
      hostname: "127.0.0.1",
      config: testConfig({
        port: 0,
        kvPath: h.kvPath!,
        rpcUrls: { devnet: proxy.url, mainnet: proxy.url },
      }),
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 7_000));
    } finally {
      await service.close();
      kv.close();
    }

    // Then: its status lookups come 1.5 s apart (the sweep's first one aside)
    const times = proxy.callTimes("getSignatureStatuses").slice(1);
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? NaN)).sort((x, y) => x - y);
    assert.ok(gaps.length >= 3, `${gaps.length} gaps`);
    const median = gaps[Math.floor(gaps.length / 2)] ?? NaN;
    assert.ok(median >= 1_400 && median < 1_800, `median gap ${median} ms (${gaps.join(", ")})`);
  } finally {
    await proxy?.close();
  }
});

onEachStore(
  "Without the ledger methods, expiry is proven by the managed wallet's own signature history",
  async (store) => {
    await using h = await startTxHarness({
      store,
      autoAdvance: false,
      timing: { confirmWaitMs: 100 },
      proxy: true,
    });
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(8);
    h.chain.faults.neverLand(1);
    const result = await okJson(
      await h.a.post("transfer-sol", { to: { userId: 8 }, amount: "1", idempotencyKey: "history" }),
    );
    assert.equal(result.status, "submitted");
    const signed = (await getTxRequest(h.a.kv, h.project.id, "history"))!.signed!;
    // Given: a provider without minimumLedgerSlot, and the finalized chain past the margin
    h.proxy.failNext("minimumLedgerSlot", 1_000);
    finalizePast(h, signed, 40);

    // When
    await h.backgroundCheck();

    // Then: the wallet's history reaches back past the blockhash (its funding) without it
    const after = await okJson(await h.a.status("history"));
    assert.equal(after.error, EXPIRED_ERROR);
    assert.ok((h.proxy.counts().getSignaturesForAddress ?? 0) >= 1);
  },
);

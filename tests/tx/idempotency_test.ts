// Idempotency keys: stored attempts are returned, failed ones retried, other bodies refused, and
// concurrent requests with one key send at most one transaction, across instances too.
import assert from "node:assert/strict";
import type { Address } from "@solana/kit";
import { jobKey } from "../../kv/jobs.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import type { TxResult } from "../../lib/tx/lifecycle/result.ts";
import { READ_TRIES } from "../../lib/tx/rpc/chain_errors.ts";
import { call } from "../support/test_app.ts";
import {
  okJson,
  onEachStore,
  startTxHarness,
  stepWhile,
  type TxHarness,
  type TxInstance,
} from "../support/tx_harness.ts";

async function conflict(res: Response): Promise<void> {
  const body = await res.json();
  assert.deepEqual([res.status, body.error?.code], [409, "idempotency_conflict"]);
}

/** Transactions the managed wallet signed, as the chain lists them (the airdrop excluded). */
async function sentByWallet(h: TxHarness): Promise<number> {
  const list = await h.rpc.getSignaturesForAddress(h.wallet!, { commitment: "confirmed" }).send();
  return list.length - 1;
}

onEachStore(
  "Same key and body returns the stored attempt while pending, submitted or confirmed, and sends nothing new",
  async (store, t) => {
    await using h = await startTxHarness({
      store,
      autoAdvance: false,
      timing: { confirmWaitMs: 1_500 },
    });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(1);
    const body = { to: { userId: 1 }, amount: "1", idempotencyKey: "once" };
    h.chain.faults.delayLanding(1, { slots: 4 });
    const first = h.a.post("transfer-sol", body);

    await t.step("pending", async () => {
      // Once the first request has sent its transaction, and while it waits for it:
      for (let i = 0; i < 500 && h.chain.faults.snapshot().heldTransactions.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const again = await okJson(await h.a.post("transfer-sol", body));
      assert.equal(again.status, "pending");
      assert.equal(typeof again.signature, "string");
    });
    await t.step("submitted", async () => {
      const answer = await okJson(await first);
      assert.equal(answer.status, "submitted");
      const again = await okJson(await h.a.post("transfer-sol", body));
      assert.deepEqual(again, answer);
    });
    await t.step("confirmed", async () => {
      h.chain.advanceSlots(6);
      h.a.clock.advance(h.a.ctx.tx.timing.confirmWaitMs + h.a.ctx.tx.timing.confirmIntervalMs);
      await h.txEvents();
      const again = await okJson(await h.a.post("transfer-sol", body));
      assert.equal(again.status, "confirmed");
      const more = await okJson(await h.a.post("transfer-sol", body));
      assert.deepEqual(more, again);
    });
    assert.equal(await sentByWallet(h), 1);
    assert.equal((await h.rpc.getBalance(to).send()).value, 1_000_000_000n);
    assert.equal((await h.txEvents()).length, 1);
  },
);

onEachStore(
  "A failed attempt is retried by the same key and body; it sends its own event",
  async (store) => {
    await using h = await startTxHarness({ store, fund: 1_000_000_000n });
    await h.policy({ maxSolPerTransfer: "10" });
    await h.link(1);
    const body = { to: { userId: 1 }, amount: "2", idempotencyKey: "retry" };
    const failed = await okJson(await h.a.post("transfer-sol", body));
    assert.equal(failed.status, "failed");
    // A different body is refused even though the attempt failed.
    await conflict(await h.a.post("transfer-sol", { ...body, amount: "0.5" }));

    // When: funds arrive and the same request is sent again
    await h.chain.airdrop(h.wallet!, 5_000_000_000n);
    h.chain.advanceSlots(2);
    const retried = await okJson(await h.a.post("transfer-sol", body));

    // Then
    assert.equal(retried.status, "confirmed");
    assert.notEqual(retried.signature, failed.signature);
    assert.equal((await getTxRequest(h.a.kv, h.project.id, "retry"))?.attempt, 2);
    const events = await h.txEvents();
    // Delivery order is not guaranteed; the statuses sort failed after confirmed.
    assert.deepEqual(events.map((e) => [e.status, e.signature]).sort().reverse(), [
      ["failed", failed.signature],
      ["confirmed", retried.signature],
    ]);
  },
);

onEachStore(
  "Bodies are compared as sent: 1 and 1.0 differ, a player and their wallet differ, kinds differ",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "5" });
    const wallet = await h.link(1);
    const stored = await okJson(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1", idempotencyKey: "k" }),
    );
    assert.equal(stored.status, "confirmed");
    await conflict(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1.0", idempotencyKey: "k" }),
    );
    await conflict(
      await h.a.post("transfer-sol", { to: { address: wallet }, amount: "1", idempotencyKey: "k" }),
    );
    await conflict(
      await h.a.post("transfer-token", {
        to: { userId: 1 },
        mint: wallet,
        amount: "1",
        idempotencyKey: "k",
      }),
    );
    // Keys are per project and exact: another key is a new request.
    const other = await okJson(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1.0", idempotencyKey: "K" }),
    );
    assert.equal(other.status, "confirmed");
    assert.equal(await sentByWallet(h), 2);
  },
);

onEachStore(
  "A refused request never reserves its key: fix the cause and resend with the same key",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.link(1);
    const body = { to: { userId: 1 }, amount: "1", idempotencyKey: "fixme" };
    const refused = await h.a.post("transfer-sol", body);
    assert.equal(refused.status, 403);
    await refused.body?.cancel();
    // A different body with the same key is not a conflict either.
    const other = await h.a.post("transfer-sol", { ...body, amount: "3" });
    assert.equal((await other.json()).error.code, "sol_transfers_disabled");
    await h.policy({ maxSolPerTransfer: "5" });
    assert.equal((await okJson(await h.a.post("transfer-sol", body))).status, "confirmed");
  },
);

onEachStore(
  "After a 502 at step 14 the key holds that body: the same body retries, another conflicts",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(1);
    const body = { to: { userId: 1 }, amount: "1", idempotencyKey: "down" };
    h.chain.faults.failHttp(READ_TRIES);
    const down = await h.a.post("transfer-sol", body);
    assert.equal(down.status, 502);
    await down.body?.cancel();
    await conflict(await h.a.post("transfer-sol", { ...body, amount: "2" }));
    assert.equal((await okJson(await h.a.post("transfer-sol", body))).status, "confirmed");
  },
);

/** Fires `n` identical requests spread over the instances at once; returns the answers. */
async function burst(
  instances: TxInstance[],
  n: number,
  body: unknown,
): Promise<Record<string, unknown>[]> {
  const answers = await Promise.all(
    Array.from({ length: n }, (_, i) => {
      const instance = instances[i % instances.length];
      assert.ok(instance);
      return instance.post("transfer-sol", body);
    }),
  );
  return await Promise.all(answers.map(okJson));
}

function assertOneTransaction(answers: Record<string, unknown>[]): void {
  const signatures = new Set(answers.map((a) => a.signature).filter((s) => s !== null));
  assert.equal(signatures.size, 1);
  assert.ok(answers.every((a) => ["pending", "confirmed"].includes(a.status as string)));
  assert.ok(answers.some((a) => a.status === "confirmed"));
}

onEachStore(
  "A key whose payout failed without leaving the node is kept 30 days; other keys are kept for good",
  async (store) => {
    await using h = await startTxHarness({ store, fund: 2_000_000_000n });
    await h.policy({ maxSolPerTransfer: "100" });
    await h.link(1);
    const send = (key: string, amount: string) =>
      h.a.post("transfer-sol", { to: { userId: 1 }, amount, idempotencyKey: key });
    // Given: a payout refused in simulation (the wallet holds 2 SOL), and one that confirmed
    assert.equal((await okJson(await send("broke", "50"))).status, "failed");
    assert.equal((await okJson(await send("paid", "1"))).status, "confirmed");
    const listed = async (status: string) =>
      (await (await call(h.a.app, `/v1/tx?status=${status}`, { apiKey: h.apiKey })).json())
        .transactions.map((t: TxResult) => t.idempotencyKey);

    // When: 30 days pass, less a minute: both are still known
    h.a.clock.advance(30 * 24 * 3_600_000 - 60_000);
    assert.equal((await okJson(await h.a.status("broke"))).status, "failed");
    await conflict(await send("broke", "0.5"));

    // Then: a minute later the failed key is unknown, and free for another body; the paid one stays
    h.a.clock.advance(60_000);
    assert.equal((await h.a.status("broke")).status, 404);
    assert.deepEqual(await listed("failed"), []);
    assert.equal((await okJson(await h.a.status("paid"))).status, "confirmed");
    assert.equal((await okJson(await send("broke", "0.5"))).status, "confirmed");
    assert.deepEqual(await listed("confirmed"), ["broke", "paid"]);
  },
);

/** 50 requests with one key at once over `instances`: one transaction, 1 SOL paid once. */
async function assertOneKeyPaysOnce(
  h: TxHarness,
  instances: TxInstance[],
  idempotencyKey: string,
): Promise<void> {
  await h.policy({ maxSolPerTransfer: "5" });
  const to: Address = await h.link(1);
  const answers = await burst(instances, 50, { to: { userId: 1 }, amount: "1", idempotencyKey });
  assertOneTransaction(answers);
  assert.equal(await sentByWallet(h), 1);
  assert.equal((await h.rpc.getBalance(to).send()).value, 1_000_000_000n);
}

onEachStore("50 concurrent requests with one key send one transaction", async (store) => {
  await using h = await startTxHarness({ store });
  await assertOneKeyPaysOnce(h, [h.a], "burst");
  assert.equal((await h.txEvents()).length, 1);
});

onEachStore(
  "Concurrent requests with one key on two instances sharing one store send one transaction",
  async (store) => {
    await using h = await startTxHarness({ store });
    await assertOneKeyPaysOnce(h, [h.a, await h.instance()], "twin");
  },
);

onEachStore(
  "GET /v1/tx/:idempotencyKey answers the stored result for a URL-encoded key, and not_found otherwise",
  async (store) => {
    await using h = await startTxHarness({ store, autoAdvance: false });
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(1);
    const key = "order 7/8 ?#% é🎮";
    const sent = await okJson(
      await stepWhile(
        h.chain,
        h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1", idempotencyKey: key }),
      ),
    );
    assert.deepEqual(await okJson(await h.a.status(key)), sent);
    const missing = await h.a.status("order 7/9");
    assert.deepEqual([missing.status, (await missing.json()).error.code], [404, "not_found"]);
  },
);

onEachStore(
  "GET /v1/tx/:idempotencyKey resumes checking a submitted request whose check job was lost",
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
      await h.a.post("transfer-sol", {
        to: { userId: 1 },
        amount: "1",
        idempotencyKey: "lost-job",
      }),
    );
    assert.equal(sent.status, "submitted");
    // Given: the attempt's check job is gone
    const record = await getTxRequest(h.a.kv, h.project.id, "lost-job");
    await h.a.kv.delete(jobKey(record!.checkJobId!));
    h.chain.advanceSlots(5);

    // When: the status route is asked, then due jobs run (no clock change)
    assert.equal((await okJson(await h.a.status("lost-job"))).status, "submitted");
    await h.txEvents();

    // Then
    assert.equal((await okJson(await h.a.status("lost-job"))).status, "confirmed");
  },
);

onEachStore(
  "Identical requests under different keys are separate transactions, even in one slot",
  async (store) => {
    await using h = await startTxHarness({ store, autoAdvance: false });
    await h.policy({ maxSolPerTransfer: "5" });
    const to = await h.link(1);
    const answers = await stepWhile(
      h.chain,
      Promise.all(
        ["x", "y"].map((key) =>
          h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1", idempotencyKey: key })
        ),
      ),
    );
    const [x, y] = await Promise.all(answers.map(okJson));
    assert.ok(x && y);
    assert.deepEqual([x.status, y.status], ["confirmed", "confirmed"]);
    assert.notEqual(x.signature, y.signature);
    assert.equal((await h.rpc.getBalance(to).send()).value, 2_000_000_000n);
  },
);

onEachStore(
  "GET /v1/tx lists requests by latest attempt, newest first, filtered by status and paged by next",
  async (store, t) => {
    await using h = await startTxHarness({ store, fund: 1_000_000_000n });
    await h.policy({ maxSolPerTransfer: "10" });
    await h.link(1);
    const to = await h.link(2);
    const send = (key: string, amount: string, target: unknown = { userId: 1 }) =>
      h.a.post("transfer-sol", { to: target, amount, idempotencyKey: key }).then(okJson);
    await send("first", "5"); // fails: the wallet holds 1 SOL
    h.a.clock.advance(1);
    await send("second", "0.1", { address: to });
    h.a.clock.advance(1);
    await send("third", "2"); // fails too, never retried
    await h.chain.airdrop(h.wallet!, 10_000_000_000n);
    h.a.clock.advance(1);
    await send("first", "5"); // retried: its new attempt is the newest
    const list = async (query: string) => {
      const response = await call(h.a.app, `/v1/tx${query}`, { apiKey: h.apiKey });
      assert.equal(response.status, 200);
      return await response.json();
    };

    await t.step(
      "each item is a TxResult with amount, mint, userId, createdAt and requestedBy",
      async () => {
        const { transactions, next } = await list("");
        assert.deepEqual(transactions.map((r: TxResult) => [r.idempotencyKey, r.status]), [
          ["first", "confirmed"],
          ["third", "failed"],
          ["second", "confirmed"],
        ]);
        const second = transactions[2];
        assert.deepEqual(Object.keys(second).sort(), [
          "amount",
          "createdAt",
          "error",
          "idempotencyKey",
          "kind",
          "mint",
          "recipient",
          "requestedBy",
          "signature",
          "status",
          "userId",
        ]);
        assert.deepEqual(
          [second.amount, second.mint, second.userId, second.recipient, second.requestedBy],
          ["0.1", null, 2, to, null],
        );
        assert.equal(transactions[0].userId, 1);
        assert.equal(transactions[0].createdAt, h.a.clock.now(), "the latest attempt's time");
        assert.equal(next, null, "the whole list fits in one page");
      },
    );

    await t.step("status filters, limit pages, next continues", async () => {
      assert.deepEqual((await list("?status=failed")).transactions.map(keyOf), ["third"]);
      assert.deepEqual((await list("?status=pending")).transactions, []);
      const one = await list("?limit=1");
      assert.deepEqual(one.transactions.map(keyOf), ["first"]);
      const two = await list(`?limit=1&after=${one.next}`);
      assert.deepEqual(two.transactions.map(keyOf), ["third"]);
      const three = await list(`?limit=5&after=${two.next}`);
      assert.deepEqual([three.transactions.map(keyOf), three.next], [["second"], null]);
      const confirmed = await list("?status=confirmed&limit=1");
      assert.deepEqual(confirmed.transactions.map(keyOf), ["first"]);
      const older = await list(`?status=confirmed&limit=1&after=${confirmed.next}`);
      assert.deepEqual(older.transactions.map(keyOf), ["second"]);
    });

    await t.step("a bad status, cursor or limit answers invalid_request", async () => {
      for (const query of ["?status=done", "?after=abc", "?limit=0", "?limit=101", "?limit=x"]) {
        const response = await call(h.a.app, `/v1/tx${query}`, { apiKey: h.apiKey });
        assert.equal(response.status, 400, query);
        assert.equal((await response.json()).error.code, "invalid_request", query);
      }
    });
  },
);

const keyOf = (r: TxResult) => r.idempotencyKey;

// POST /v1/tx/batch: up to 50 payouts in one counted request, each item checked, reserved and
// answered as if sent alone, items of one kind and asset sharing transactions whose keys share
// their fate, retries idempotent item by item.
import assert from "node:assert/strict";
import type { Address } from "@solana/kit";
import {
  balanceOf,
  finalizePast,
  fundWalletWithTokens,
  okJson,
  onEachStore,
  startTxHarness,
  stepWhile,
  type TxHarness,
} from "../support/tx_harness.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { EXPIRED_ERROR } from "../../lib/tx/lifecycle/result.ts";
import { getRequestUsage } from "../../kv/usage.ts";

type Item = Record<string, unknown>;

function sol(userId: number, key: string, amount = "1"): Item {
  return { kind: "transfer-sol", to: { userId }, amount, idempotencyKey: key };
}

/** The body of the single route for a batch item. */
function alone(item: Item): Item {
  const { kind: _, ...body } = item;
  return body;
}

async function batch(h: TxHarness, items: Item[]): Promise<Array<Record<string, unknown>>> {
  return (await okJson(await h.a.post("batch", { items }))).items as Array<Record<string, unknown>>;
}

function outcome(item: Record<string, unknown>): string {
  const error = item.error as { code: string } | null;
  const result = item.result as { status: string } | null;
  assert.ok((error === null) !== (result === null), JSON.stringify(item));
  return error ? error.code : result!.status;
}

function resultOf(item: Record<string, unknown>): Record<string, unknown> {
  return item.result as Record<string, unknown>;
}

async function requestsCounted(h: TxHarness): Promise<number> {
  return (await getRequestUsage(h.a.kv, h.project.id, h.a.clock.now())).today;
}

onEachStore(
  "A batch pays every item in one counted request, items of one kind and asset sharing transactions",
  async (store) => {
    await using h = await startTxHarness({ store });
    const mint = await fundWalletWithTokens(h);
    await h.policy({ maxSolPerTransfer: "1", allowedMints: [{ mint, maxPerTransaction: "1" }] });
    const players: Address[] = [];
    for (let i = 1; i <= 12; i++) players.push(await h.link(i));
    const counted = await requestsCounted(h);
    const items = [
      ...players.slice(0, 11).map((_, i) => sol(i + 1, `sol-${i + 1}`, "0.5")),
      { kind: "transfer-token", to: { userId: 12 }, mint, amount: "1", idempotencyKey: "token" },
    ];

    const answers = await batch(h, items);

    // Then: every item answered as its single route would, in order
    assert.deepEqual(answers.map(outcome), items.map(() => "confirmed"));
    assert.deepEqual(answers.map((a) => a.idempotencyKey), items.map((i) => i.idempotencyKey));
    assert.deepEqual(answers.map((a) => resultOf(a).recipient), players);
    // And: 8 SOL transfers in one transaction, the other 3 in another, the token in its own
    const signatures = answers.map((a) => resultOf(a).signature as string);
    assert.equal(new Set(signatures.slice(0, 8)).size, 1);
    assert.equal(new Set(signatures.slice(8, 11)).size, 1);
    assert.equal(new Set(signatures).size, 3);
    for (const player of players.slice(0, 11)) {
      assert.equal(await balanceOf(h, player), 500_000_000n);
    }
    // And: one request counted, one tx event per item
    assert.equal(await requestsCounted(h), counted + 1);
    const events = await h.txEvents();
    assert.deepEqual(events.map((e) => e.key).sort(), items.map((i) => i.idempotencyKey).sort());
  },
);

onEachStore(
  "Each batch item passes its checks and limits alone, in order: an item's error does not fail the others",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "1", hourlyBudgets: [{ asset: "SOL", amount: "3" }] });
    for (let i = 1; i <= 5; i++) await h.link(i);
    const answers = await batch(h, [
      sol(1, "a"),
      sol(99, "unlinked"),
      sol(2, "b"),
      sol(3, "too-much", "2"),
      sol(3, "c"),
      sol(4, "over-budget"),
      sol(5, "also-over-budget", "0.5"),
    ]);
    assert.deepEqual(answers.map(outcome), [
      "confirmed",
      "wallet_not_linked",
      "confirmed",
      "amount_over_limit",
      "confirmed",
      "hourly_budget_exceeded",
      "hourly_budget_exceeded",
    ]);
    // Refused items hold no key: fixed, they go through later
    assert.equal((await h.a.status("unlinked")).status, 404);
  },
);

onEachStore(
  "A batch retried is idempotent item by item; a key used by a single request answers as that request",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "1" });
    const to = [await h.link(1), await h.link(2), await h.link(3)];
    const single = await okJson(await h.a.post("transfer-sol", alone(sol(1, "single"))));
    const items = [sol(1, "single"), sol(2, "new")];

    const first = await batch(h, items);
    const again = await batch(h, items);

    assert.deepEqual(resultOf(first[0]!), single);
    assert.deepEqual(again, first);
    assert.deepEqual([await balanceOf(h, to[0]!), await balanceOf(h, to[1]!)], [
      1_000_000_000n,
      1_000_000_000n,
    ]);
    // A used key with another body conflicts for that item only
    const changed = await batch(h, [sol(3, "single"), sol(3, "third")]);
    assert.deepEqual(changed.map(outcome), ["idempotency_conflict", "confirmed"]);
  },
);

onEachStore(
  "The keys of a shared transaction share its fate; one retried alone then pays alone",
  async (store) => {
    await using h = await startTxHarness({ store, fund: 2_500_000_000n });
    await h.policy({ maxSolPerTransfer: "1" });
    const to = [await h.link(1), await h.link(2), await h.link(3)];
    // Given: three payouts of 1 SOL sharing a transaction the wallet (2.5 SOL) cannot cover
    const answers = await batch(h, [sol(1, "x"), sol(2, "y"), sol(3, "z")]);
    assert.deepEqual(answers.map(outcome), ["failed", "failed", "failed"]);
    assert.equal(new Set(answers.map((a) => resultOf(a).signature)).size, 1);
    assert.equal(await balanceOf(h, to[0]!), 0n);
    // When: one key is sent again alone
    const retried = await okJson(await h.a.post("transfer-sol", alone(sol(1, "x"))));
    // Then: it pays alone, under a transaction of its own
    assert.equal(retried.status, "confirmed");
    assert.notEqual(retried.signature, resultOf(answers[0]!).signature);
    assert.equal(await balanceOf(h, to[0]!), 1_000_000_000n);
    assert.equal(await balanceOf(h, to[1]!), 0n);
  },
);

Deno.test("A malformed batch is one 400 and reserves nothing", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(1);
  const refused = async (body: unknown) => {
    const res = await h.a.post("batch", body);
    assert.equal(res.status, 400);
    return ((await res.json()) as { error: { code: string } }).error.code;
  };
  assert.equal(
    await refused({ items: [sol(1, "same"), sol(1, "same", "0.5")] }),
    "invalid_request",
  );
  assert.equal(
    await refused({ items: Array.from({ length: 51 }, (_, i) => sol(1, `k${i}`)) }),
    "invalid_request",
  );
  assert.equal(await refused({ items: [] }), "invalid_request");
  assert.equal(
    await refused({ items: [{ ...sol(1, "no-kind"), kind: "burn" }] }),
    "invalid_request",
  );
  assert.equal((await h.a.status("same")).status, 404);
  assert.equal((await h.a.status("k0")).status, 404);
});

onEachStore(
  "A shared transaction that never lands fails all its keys once expiry is proven; one retried alone pays alone",
  async (store) => {
    await using h = await startTxHarness({
      store,
      autoAdvance: false,
      timing: { confirmWaitMs: 100 },
    });
    await h.policy({ maxSolPerTransfer: "1" });
    const to = [await h.link(1), await h.link(2)];
    h.chain.faults.neverLand(1);
    const answers = await batch(h, [sol(1, "lost-1"), sol(2, "lost-2")]);
    assert.deepEqual(answers.map(outcome), ["submitted", "submitted"]);
    const signed = (await getTxRequest(h.a.kv, h.project.id, "lost-1"))!.signed!;
    assert.equal(signed.shared, 2);

    // When: its expiry is proven on the finalized chain
    finalizePast(h, signed, 33);
    await h.backgroundCheck();

    // Then: both keys failed as expired, under the one signature, each with its event
    for (const key of ["lost-1", "lost-2"]) {
      const after = await okJson(await h.a.status(key));
      assert.deepEqual([after.status, after.error], ["failed", EXPIRED_ERROR]);
      assert.equal(after.signature, resultOf(answers[0]!).signature);
    }
    assert.deepEqual((await h.txEvents()).map((e) => e.key).sort(), ["lost-1", "lost-2"]);
    // And: a key retried alone pays alone, the other stays failed (once the blockhash the service
    // reuses for a second has been read again: the chain jumped 150 blocks in no time)
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const retried = await stepWhile(h.chain, h.a.post("transfer-sol", alone(sol(1, "lost-1"))));
    const body = await okJson(retried);
    assert.notEqual(body.signature, resultOf(answers[0]!).signature);
    h.chain.advanceSlots(5);
    await h.backgroundCheck();
    assert.equal((await okJson(await h.a.status("lost-1"))).status, "confirmed");
    assert.equal(await balanceOf(h, to[0]!), 1_000_000_000n);
    assert.equal(await balanceOf(h, to[1]!), 0n);
    assert.equal((await okJson(await h.a.status("lost-2"))).status, "failed");
  },
);

// The keys of a shared transaction share its fate even when the store fails between their changes
// (issue 37): settled in one commit, never some `failed` while the others still follow the same
// signed bytes, and a key whose shared attempt was refused is retried only once every attempt of
// that signature is proven dead. A recipient is paid once per key, never once per attempt.
import assert from "node:assert/strict";
import type { Address } from "@solana/kit";
import { startRemoteStore } from "../support/remote_store.ts";
import {
  balanceOf,
  okJson,
  onEachStore,
  startTxHarness,
  stepWhile,
  type TestStore,
} from "../support/tx_harness.ts";
import { txRequestKey, type TxRequestRecord } from "../../kv/tx_requests.ts";

const CENT = 10_000_000n;

function item(userId: number, key: string): Record<string, unknown> {
  return { kind: "transfer-sol", to: { userId }, amount: "0.01", idempotencyKey: key };
}

function alone(body: Record<string, unknown>): Record<string, unknown> {
  const { kind: _, ...rest } = body;
  return rest;
}

Deno.test("A shared transaction refused while the store fails one key's settlement pays each key once after a top-up and retries", async () => {
  // Given: a remote store, an RPC proxy, and a wallet that cannot cover two payouts of 0.01 SOL
  await using store = await startRemoteStore();
  await using h = await startTxHarness({
    kvPath: store.url,
    proxy: true,
    autoAdvance: false,
    fund: 15_000_000n,
  });
  await h.policy({ maxSolPerTransfer: "1" });
  const to: Address[] = [await h.link(1), await h.link(2)];
  const items = [item(1, "fate-a"), item(2, "fate-b")];

  // When: the batch's shared transaction is refused in preflight on its first send, while every
  // commit changing key B loses its checks for 100 rounds (the settlement's rounds)
  const held = h.proxy.hold("sendTransaction");
  const answered = h.a.post("batch", { items });
  await held.arrived;
  store.server.faults.losingChecksTo = { text: "fate-b", times: 100 };
  h.proxy.release({ forward: true });
  const first = (await okJson(await answered)).items as Array<{ result: { signature: string } }>;
  store.server.faults.losingChecksTo = null;
  const signature = first[0]!.result.signature;
  assert.equal(first[1]!.result.signature, signature);

  // When: the wallet is topped up and the client retries every key with the same body
  await h.chain.airdrop(h.wallet!, 1_000_000_000n);
  h.chain.advanceSlots(2);
  for (const body of items) await stepWhile(h.chain, h.a.post("transfer-sol", alone(body)));
  // And: the background follows whatever is still open until it settles
  for (let round = 0; round < 5; round++) {
    await h.backgroundCheck();
    h.chain.advanceSlots(5);
  }
  await h.backgroundCheck();

  // Then: each recipient got exactly one payment of 0.01 SOL
  assert.deepEqual(await Promise.all(to.map((address) => balanceOf(h, address))), [CENT, CENT]);
  for (const key of ["fate-a", "fate-b"]) {
    assert.equal((await okJson(await h.a.status(key))).status, "confirmed", key);
  }
});

/**
 * Given: a batch [A, B] refused in preflight (a wallet that cannot cover it), then B left
 * `submitted` on the shared bytes, as an earlier version could leave it (a commit per key), its
 * confirmation job resumed by a status read; `siblingList`: whether the stored attempts name the
 * keys they share the transaction with (earlier versions stored only their count).
 */
async function refusedWithOpenSibling(store: TestStore, siblingList: boolean): Promise<void> {
  await using h = await startTxHarness({ store, autoAdvance: false, fund: 15_000_000n });
  await h.policy({ maxSolPerTransfer: "1" });
  const to: Address[] = [await h.link(1), await h.link(2)];
  const items = [item(1, "old-a"), item(2, "old-b")];
  const first = (await okJson(await h.a.post("batch", { items }))).items as Array<
    { result: { status: string; signature: string } }
  >;
  assert.deepEqual(first.map((i) => i.result.status), ["failed", "failed"]);
  for (const key of ["old-a", "old-b"]) {
    const entryKey = txRequestKey(h.project.id, key);
    const stored = (await h.a.kv.get<TxRequestRecord>(entryKey)).value!;
    const { expiresAt: _, ...record } = stored;
    const signed: Record<string, unknown> = { ...record.signed! };
    if (!siblingList) delete signed.sharedKeys;
    if (key === "old-a") {
      await h.a.kv.set(entryKey, { ...record, signed });
      continue;
    }
    delete signed.refused;
    await h.a.kv.set(entryKey, { ...record, status: "submitted", error: null, signed });
    await h.a.kv.set(["tx_unsettled", h.project.id, key], {
      attemptId: record.attemptId,
      since: record.createdAt,
    });
  }
  assert.equal((await okJson(await h.a.status("old-b"))).status, "submitted");

  // When: the wallet is topped up and A is retried at once
  await h.chain.airdrop(h.wallet!, 1_000_000_000n);
  h.chain.advanceSlots(2);
  const retried = await okJson(
    await stepWhile(h.chain, h.a.post("transfer-sol", alone(items[0]!))),
  );

  // Then: A is not sent again while B may still send the bytes that pay A too
  assert.equal(retried.status, "failed");
  assert.equal(retried.signature, first[0]!.result.signature);
  // And: once B's background lands them, A's next retry finds its payment: paid once
  for (let round = 0; round < 3; round++) {
    await h.backgroundCheck();
    h.chain.advanceSlots(5);
  }
  await h.backgroundCheck();
  assert.equal((await okJson(await h.a.status("old-b"))).status, "confirmed");
  const again = await okJson(await stepWhile(h.chain, h.a.post("transfer-sol", alone(items[0]!))));
  assert.deepEqual([again.status, again.signature], ["confirmed", first[0]!.result.signature]);
  assert.deepEqual(await Promise.all(to.map((address) => balanceOf(h, address))), [CENT, CENT]);
}

onEachStore(
  "A refused key is not retried while a key sharing its signature may still send it (attempts naming their siblings)",
  async (store) => {
    await refusedWithOpenSibling(store, true);
  },
);

onEachStore(
  "A refused key is not retried while a key sharing its signature may still send it (attempts of an earlier version, only counted)",
  async (store) => {
    await refusedWithOpenSibling(store, false);
  },
);

onEachStore(
  "The keys of a refused shared transaction give their places in the hourly windows back",
  async (store) => {
    // Given: one payout per recipient and per player an hour, and a wallet that cannot cover two
    await using h = await startTxHarness({ store, fund: 15_000_000n });
    await h.policy({ maxSolPerTransfer: "1", perRecipientPerHour: 1, perPlayerPerHour: 1 });
    const to: Address[] = [await h.link(1), await h.link(2)];
    const first = (await okJson(
      await h.a.post("batch", { items: [item(1, "win-a"), item(2, "win-b")] }),
    )).items as Array<{ result: { status: string } }>;
    assert.deepEqual(first.map((i) => i.result.status), ["failed", "failed"]);
    const events = await h.txEvents();
    assert.deepEqual(events.map((e) => [e.key, e.status]).sort(), [
      ["win-a", "failed"],
      ["win-b", "failed"],
    ]);

    // When: the wallet is topped up and each player is paid under a new key
    await h.chain.airdrop(h.wallet!, 1_000_000_000n);
    h.chain.advanceSlots(2);
    const later = await okJson(
      await h.a.post("batch", { items: [item(1, "win-c"), item(2, "win-d")] }),
    );

    // Then: neither window still counts the failed payouts
    const items = later.items as Array<{ result: { status: string } | null; error: unknown }>;
    assert.deepEqual(items.map((i) => i.result?.status ?? i.error), ["confirmed", "confirmed"]);
    assert.deepEqual(await Promise.all(to.map((address) => balanceOf(h, address))), [CENT, CENT]);
  },
);

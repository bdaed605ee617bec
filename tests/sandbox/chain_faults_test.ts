import assert from "node:assert/strict";
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  isSolanaError,
  type KeyPairSigner,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
} from "@solana/kit";
import { type SandboxChain, startChain } from "../../sandbox/chain/mod.ts";
import { createFundedSigner, signSolTransfer } from "../../sandbox/chain/fixtures.ts";

async function sendTransfer(chain: SandboxChain, sender: KeyPairSigner, amount: bigint) {
  const rpc = createSolanaRpc(chain.rpcUrl);
  const recipient = await generateKeyPairSigner();
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const tx = await signSolTransfer(sender, recipient.address, amount, latest);
  const wire = getBase64EncodedWireTransaction(tx);
  const signature = await rpc.sendTransaction(wire, {
    encoding: "base64",
    preflightCommitment: "confirmed",
    maxRetries: 0n,
  }).send();
  return { signature, wire, latest, recipient };
}

Deno.test("faults.neverLand() accepts a transaction that then expires", async () => {
  const lines: string[] = [];
  await using chain = await startChain({ autoAdvance: false, log: (line) => lines.push(line) });
  const rpc = createSolanaRpc(chain.rpcUrl);
  // Given
  const sender = await createFundedSigner(chain);
  chain.faults.neverLand(1);

  // When
  const { signature, wire, latest, recipient } = await sendTransfer(chain, sender, 1_000_000n);
  let expired = false;
  for (let i = 0; i < 200 && !expired; i++) {
    // The service's loop: rebroadcast the same bytes, poll status, compare block height.
    await rpc.sendTransaction(wire, { encoding: "base64", skipPreflight: true }).send();
    const { value: [status] } = await rpc.getSignatureStatuses([signature]).send();
    assert.equal(status, null);
    const height = await rpc.getBlockHeight({ commitment: "confirmed" }).send();
    expired = height > latest.lastValidBlockHeight;
    chain.advanceSlots(1);
  }

  // Then
  assert.ok(expired);
  const { value: [status] } = await rpc.getSignatureStatuses([signature], {
    searchTransactionHistory: true,
  }).send();
  assert.equal(status, null);
  const balance = await rpc.getBalance(recipient.address, { commitment: "processed" }).send();
  assert.equal(balance.value, 0n);
  const events = lines.map((l) => JSON.parse(l));
  assert.ok(events.some((e) => e.event === "fault_applied" && e.fault === "never_land"));
  assert.ok(events.some((e) => e.event === "tx_expired" && e.signature === signature));
  // The next transaction lands again.
  const next = await sendTransfer(chain, sender, 1_000_000n);
  const { value: [landed] } = await rpc.getSignatureStatuses([next.signature]).send();
  assert.equal(landed?.confirmationStatus, "processed");
});

Deno.test("faults.delayLanding() lands a transaction only after the delay", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const sender = await createFundedSigner(chain);
  chain.faults.delayLanding(1, { slots: 5 });
  const { signature } = await sendTransfer(chain, sender, 1_000_000n);
  chain.advanceSlots(4);
  assert.equal((await rpc.getSignatureStatuses([signature]).send()).value[0], null);
  chain.advanceSlots(1);
  const { value: [status] } = await rpc.getSignatureStatuses([signature]).send();
  assert.equal(status?.confirmationStatus, "processed");
});

Deno.test("faults.failHttp() and closeConnections() hit the next RPC calls only", async (t) => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  await t.step("HTTP 5xx", async () => {
    chain.faults.failHttp(2, { status: 502 });
    for (let i = 0; i < 2; i++) {
      const error = await rpc.getSlot().send().then(() => null, (e) => e);
      assert.ok(isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR));
      assert.equal(error.context.statusCode, 502);
    }
    assert.equal(typeof await rpc.getSlot().send(), "bigint");
  });
  await t.step("closed connection", async () => {
    chain.faults.closeConnections(1);
    const error = await rpc.getSlot().send().then(() => null, (e) => e);
    assert.ok(error instanceof Error);
    assert.ok(!isSolanaError(error));
    assert.equal(typeof await rpc.getSlot().send(), "bigint");
  });
});

Deno.test("faults.pauseFinalization() holds the finalized slot while others move", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const sender = await createFundedSigner(chain);
  chain.faults.pauseFinalization();
  const frozen = await rpc.getSlot({ commitment: "finalized" }).send();
  const { signature } = await sendTransfer(chain, sender, 1_000_000n);
  chain.advanceSlots(64);
  assert.equal(await rpc.getSlot({ commitment: "finalized" }).send(), frozen);
  const { value: [held] } = await rpc.getSignatureStatuses([signature]).send();
  assert.equal(held?.confirmationStatus, "confirmed");
  chain.faults.resumeFinalization();
  chain.advanceSlots(1);
  const { value: [done] } = await rpc.getSignatureStatuses([signature]).send();
  assert.equal(done?.confirmationStatus, "finalized");
});

Deno.test("control API arms faults and steps time over HTTP", async () => {
  const lines: string[] = [];
  await using chain = await startChain({ autoAdvance: false, log: (line) => lines.push(line) });
  const post = async (path: string, body: unknown) => {
    const response = await fetch(`${chain.controlUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const before = chain.clock().slot;
  const advanced = await post("/advance", { slots: 10 });
  assert.equal(advanced.status, 200);
  assert.equal(advanced.body.slot, before + 10);
  const armed = await post("/faults/http", { count: 1, status: 503 });
  assert.equal(armed.body.faults.http.count, 1);
  const failed = await fetch(chain.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "getHealth" }),
  });
  assert.equal(failed.status, 503);
  await failed.body?.cancel();
  // The control API itself is never hit by RPC faults.
  await post("/faults/http", { count: 5 });
  assert.equal((await post("/faults/clear", {})).body.faults.http.count, 0);
  const invalid = await post("/faults/never-land", { count: -1 });
  assert.equal(invalid.status, 400);
  assert.equal(invalid.body.error.code, "invalid_request");
  const state = await fetch(`${chain.controlUrl}/state`).then((r) => r.json());
  assert.equal(state.slot, before + 10);
  assert.ok(lines.some((l) => JSON.parse(l).event === "fault_applied"));
});

Deno.test("faults.pruneHistory() makes the node forget earlier slots, as one started from a snapshot", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const sender = await createFundedSigner(chain);
  const { signature } = await sendTransfer(chain, sender, 1_000_000n);
  chain.advanceSlots(2);
  const landedAt = Number((await rpc.getSignatureStatuses([signature]).send()).value[0]!.slot);
  assert.equal(await rpc.getFirstAvailableBlock().send(), 0n);

  // When: the control API prunes everything up to the transaction's slot
  const res = await fetch(`${chain.controlUrl}/faults/prune-history`, {
    method: "POST",
    body: JSON.stringify({ firstAvailableSlot: landedAt + 1 }),
  });
  assert.equal((await res.json()).faults.firstAvailableSlot, landedAt + 1);

  // Then: every history read answers as if it never happened
  assert.equal(await rpc.getFirstAvailableBlock().send(), BigInt(landedAt + 1));
  assert.equal(await rpc.minimumLedgerSlot().send(), BigInt(landedAt + 1));
  const search = { searchTransactionHistory: true };
  assert.equal((await rpc.getSignatureStatuses([signature], search).send()).value[0], null);
  assert.equal(await rpc.getTransaction(signature, { encoding: "json" }).send(), null);
  assert.deepEqual(await rpc.getSignaturesForAddress(sender.address).send(), []);

  // And: clearing the faults restores the whole history
  chain.faults.clear();
  assert.equal(
    (await rpc.getSignatureStatuses([signature], search).send()).value[0]?.err,
    null,
  );
});

Deno.test("faults.hideStatuses() answers null for landed transactions while claiming the whole history", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const sender = await createFundedSigner(chain);
  const { signature } = await sendTransfer(chain, sender, 1_000_000n);
  chain.advanceSlots(2);
  const search = { searchTransactionHistory: true };

  // When: the control API makes the node hide statuses
  const res = await fetch(`${chain.controlUrl}/faults/hide-statuses`, {
    method: "POST",
    body: JSON.stringify({ hidden: true }),
  });
  assert.equal((await res.json()).faults.hideStatuses, true);

  // Then: statuses and the transaction answer as unknown, at the tip, with full history claimed
  const statuses = await rpc.getSignatureStatuses([signature], search).send();
  assert.equal(statuses.value[0], null);
  assert.equal(statuses.context.slot, BigInt(chain.clock().slot));
  assert.equal(await rpc.getTransaction(signature, { encoding: "json" }).send(), null);
  assert.equal(await rpc.getFirstAvailableBlock().send(), 0n);
  assert.equal(await rpc.minimumLedgerSlot().send(), 0n);
  // And: the wallet's own address history still lists it
  const history = await rpc.getSignaturesForAddress(sender.address).send();
  assert.ok(history.some((item) => item.signature === signature));

  // And: clearing the faults shows it again
  chain.faults.clear();
  assert.equal((await rpc.getSignatureStatuses([signature], search).send()).value[0]?.err, null);
});

Deno.test("faults.lagHistory() serves history reads from behind the tip and refuses a later minContextSlot", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const sender = await createFundedSigner(chain);
  const { signature } = await sendTransfer(chain, sender, 1_000_000n);
  chain.advanceSlots(40);
  const tip = chain.clock().slot;
  const search = { searchTransactionHistory: true };
  const landed = (await rpc.getSignatureStatuses([signature], search).send()).value[0]!;
  assert.equal(landed.confirmationStatus, "finalized");

  // When: history reads lag 50 slots behind the tip (before the landing)
  const res = await fetch(`${chain.controlUrl}/faults/lag-history`, {
    method: "POST",
    body: JSON.stringify({ slots: 50 }),
  });
  assert.equal((await res.json()).faults.historyLagSlots, 50);

  // Then: the landed transaction is not seen yet, and the answer's context says how far behind
  const statuses = await rpc.getSignatureStatuses([signature], search).send();
  assert.equal(statuses.value[0], null);
  assert.equal(statuses.context.slot, BigInt(tip - 50));
  assert.equal(await rpc.getTransaction(signature, { encoding: "json" }).send(), null);
  const history = await rpc.getSignaturesForAddress(sender.address, { commitment: "confirmed" })
    .send();
  assert.ok(!history.some((item) => item.signature === signature));
  // And: an address-history read that needs a later context is refused, as a real node does
  await assert.rejects(
    rpc.getSignaturesForAddress(sender.address, {
      commitment: "confirmed",
      minContextSlot: BigInt(tip - 10),
    }).send(),
    (error) => isSolanaError(error) && String(error.context.__code) === "-32016",
  );

  // When: the lag shrinks to 10 slots
  chain.faults.lagHistory(10);

  // Then: it is seen, at a lower commitment than at the tip
  const lagging = (await rpc.getSignatureStatuses([signature], search).send()).value[0]!;
  assert.equal(lagging.slot, landed.slot);
  assert.equal(lagging.confirmationStatus, "confirmed");
  chain.faults.clear();
  const history2 = await rpc.getSignaturesForAddress(sender.address, {
    minContextSlot: BigInt(tip - 40),
  }).send();
  assert.ok(history2.some((item) => item.signature === signature));
});

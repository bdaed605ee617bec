import assert from "node:assert/strict";
import { address, generateKeyPairSigner, type Signature } from "@solana/kit";
import { base58 } from "@scure/base";
import { createFundedSigner, createMint } from "../../sandbox/chain/fixtures.ts";
import { startCounted } from "../support/chain_reads.ts";
import { call, createTestProject } from "../support/test_app.ts";

const SYSTEM_PROGRAM = address("11111111111111111111111111111111");

Deno.test("chain reads are cached for 10 s per cluster and full query", async (t) => {
  await using s = await startCounted();
  const { h, counter } = s;
  const { address: wallet } = await generateKeyPairSigner();
  h.chain.setAccount(wallet, { lamports: 5n, owner: SYSTEM_PROGRAM, data: new Uint8Array() });

  await t.step("a second balance read within 10 s makes no RPC call; after it, one", async () => {
    const path = `/v1/wallets/${wallet}/balance`;
    // Given a first read
    const before = counter.total();
    assert.equal((await (await h.get(path)).json()).lamports, "5");
    assert.equal(counter.total() - before, 1);
    // When the balance changes and time moves just short of 10 s
    h.chain.setAccount(wallet, { lamports: 6n, owner: SYSTEM_PROGRAM, data: new Uint8Array() });
    h.clock.advance(9_999);
    // Then the cached answer comes back without a call
    assert.equal((await (await h.get(path)).json()).lamports, "5");
    assert.equal(counter.total() - before, 1);
    // And at 10 s one call reads the new balance
    h.clock.advance(1);
    assert.equal((await (await h.get(path)).json()).lamports, "6");
    assert.equal(counter.total() - before, 2);
  });

  await t.step("concurrent identical misses share one RPC round trip", async () => {
    const { address: other } = await generateKeyPairSigner();
    const before = counter.total();
    // Given a first read held at the node
    const hold = counter.holdNext();
    const first = h.get(`/v1/wallets/${other}/balance`);
    await hold.arrived;
    // When four more identical reads arrive meanwhile
    const more = [1, 2, 3, 4].map(() => h.app.ctx.chain.getSolBalance("devnet", other));
    hold.release();
    // Then all five get the answer of one call
    assert.equal((await (await first).json()).lamports, "0");
    for (const answer of await Promise.all(more)) assert.equal(answer.lamports, "0");
    assert.equal(counter.total() - before, 1);
  });

  await t.step("token reads are keyed by the mint query", async () => {
    const payer = await createFundedSigner(h.chain);
    const mint = await createMint(h.chain, { payer, decimals: 2 });
    h.chain.advanceSlots(1);
    const before = counter.counts();
    const delta = (method: string) => (counter.counts()[method] ?? 0) - (before[method] ?? 0);
    await h.get(`/v1/wallets/${wallet}/tokens`);
    await h.get(`/v1/wallets/${wallet}/tokens`);
    assert.equal(delta("getTokenAccountsByOwner"), 2, "one call per token program, once");
    await h.get(`/v1/wallets/${wallet}/tokens?mint=${mint}`);
    await h.get(`/v1/wallets/${wallet}/tokens?mint=${mint}`);
    assert.equal(delta("getTokenAccountsByOwner"), 3);
    assert.equal(delta("getAccountInfo"), 1);
  });

  await t.step("asset reads are cached too", async () => {
    const before = counter.total();
    await h.get(`/v1/wallets/${wallet}/assets`);
    const first = counter.total() - before;
    assert.ok(first >= 1);
    await h.get(`/v1/wallets/${wallet}/assets`);
    assert.equal(counter.total() - before, first);
    const { address: collection } = await generateKeyPairSigner();
    await h.get(`/v1/wallets/${wallet}/assets?collection=${collection}`);
    assert.ok(counter.total() - before > first, "another query is another key");
  });

  await t.step("the cluster is part of the key", async () => {
    const mainnet = await createTestProject(h.app, { cluster: "mainnet" });
    const before = counter.total();
    const res = await call(h.app.app, `/v1/wallets/${wallet}/balance`, {
      apiKey: mainnet.apiKey,
    });
    assert.equal(res.status, 200);
    assert.equal(counter.total() - before, 1);
  });

  await t.step("signature lookups are never cached", async () => {
    const signature = base58.encode(new Uint8Array(64).fill(5)) as Signature;
    const before = counter.counts().getSignatureStatuses ?? 0;
    await h.get(`/v1/signatures/${signature}`);
    await h.get(`/v1/signatures/${signature}`);
    assert.equal((counter.counts().getSignatureStatuses ?? 0) - before, 2);
  });

  await t.step("a failed read is not cached", async () => {
    const { address: fresh } = await generateKeyPairSigner();
    h.chain.faults.failHttp(1);
    assert.equal((await h.get(`/v1/wallets/${fresh}/balance`)).status, 500);
    const res = await h.get(`/v1/wallets/${fresh}/balance`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
  });
});

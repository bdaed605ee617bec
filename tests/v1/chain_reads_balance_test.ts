import assert from "node:assert/strict";
import { address, generateKeyPairSigner } from "@solana/kit";
import { base58 } from "@scure/base";
import { airdrop } from "../../sandbox/chain/fixtures.ts";
import { startChain } from "../../sandbox/chain/mod.ts";
import { assertErrorCode } from "../support/assertions.ts";
import { startChainReads } from "../support/chain_reads.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";

const SYSTEM_PROGRAM = address("11111111111111111111111111111111");

Deno.test("GET /v1/wallets/:address/balance answers lamports and SOL exactly", async (t) => {
  await using h = await startChainReads();

  await t.step("an address with no account has 0", async () => {
    const { address: wallet } = await generateKeyPairSigner();
    const res = await h.get(`/v1/wallets/${wallet}/balance`);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { address: wallet, lamports: "0", sol: "0" });
  });

  const cases: [bigint, string][] = [
    [1n, "0.000000001"],
    [1_000_000_000n, "1"],
    [1_500_000_000n, "1.5"],
    // Past 2^53: a JavaScript number would round these.
    [(1n << 53n) + 1n, "9007199.254740993"],
    [18_446_744_073_709_551_615n, "18446744073.709551615"],
  ];
  for (const [lamports, sol] of cases) {
    await t.step(`${lamports} lamports is ${sol} SOL`, async () => {
      // Given
      const { address: wallet } = await generateKeyPairSigner();
      h.chain.setAccount(wallet, { lamports, owner: SYSTEM_PROGRAM, data: new Uint8Array() });
      // When
      const res = await h.get(`/v1/wallets/${wallet}/balance`);
      // Then
      assert.deepEqual(await res.json(), { address: wallet, lamports: String(lamports), sol });
    });
  }

  await t.step("reads at confirmed commitment, not processed", async () => {
    // Given an airdrop that has landed but is not yet confirmed
    const { address: wallet } = await generateKeyPairSigner();
    await airdrop(h.chain, wallet, 2_000_000_000n, { commitment: "processed" });
    // When / Then
    const before = await h.get(`/v1/wallets/${wallet}/balance`);
    assert.equal((await before.json()).lamports, "0");
    h.chain.advanceSlots(1);
    h.clock.advance(10_000);
    const after = await h.get(`/v1/wallets/${wallet}/balance`);
    assert.deepEqual(await after.json(), { address: wallet, lamports: "2000000000", sol: "2" });
  });

  await t.step("invalid_address for anything that is not a 32-byte base58 address", async () => {
    for (
      const bad of [
        "123",
        "not-an-address",
        base58.encode(new Uint8Array(31).fill(3)),
        base58.encode(new Uint8Array(33).fill(3)),
        "0".repeat(44),
      ]
    ) {
      await assertErrorCode(await h.get(`/v1/wallets/${bad}/balance`), 400, "invalid_address");
    }
  });

  await t.step("needs an API key", async () => {
    const res = await call(h.app.app, `/v1/wallets/${SYSTEM_PROGRAM}/balance`);
    await assertErrorCode(res, 401, "unauthorized");
  });
});

Deno.test("GET /v1/wallets/:address/balance reads the project's own cluster", async () => {
  // Given two clusters where the same wallet holds different balances
  const devnet = await startChain({ autoAdvance: false });
  const mainnet = await startChain({ autoAdvance: false });
  const app = await createTestApp({
    config: { rpcUrls: { devnet: devnet.rpcUrl, mainnet: mainnet.rpcUrl } },
  });
  try {
    const { address: wallet } = await generateKeyPairSigner();
    devnet.setAccount(wallet, { lamports: 1n, owner: SYSTEM_PROGRAM, data: new Uint8Array() });
    mainnet.setAccount(wallet, { lamports: 2n, owner: SYSTEM_PROGRAM, data: new Uint8Array() });
    const dev = await createTestProject(app, { cluster: "devnet" });
    const main = await createTestProject(app, { cluster: "mainnet" });
    // When
    const path = `/v1/wallets/${wallet}/balance`;
    const devAnswer = await (await call(app.app, path, { apiKey: dev.apiKey })).json();
    const mainAnswer = await (await call(app.app, path, { apiKey: main.apiKey })).json();
    // Then
    assert.equal(devAnswer.lamports, "1");
    assert.equal(mainAnswer.lamports, "2");
  } finally {
    await app.close();
    await devnet.close();
    await mainnet.close();
  }
});

Deno.test("GET /v1/wallets/:address/balance answers internal when the RPC fails", async (t) => {
  await using h = await startChainReads();
  const { address: wallet } = await generateKeyPairSigner();

  await t.step("an HTTP 503 from the node", async () => {
    h.chain.faults.failHttp(1, { status: 503 });
    const body = await assertErrorCode(
      await h.get(`/v1/wallets/${wallet}/balance`),
      500,
      "internal",
    );
    assert.equal(body.error.message, "Could not read from the chain");
    assert.ok(!body.error.message.includes(String(h.chain.port)));
  });

  await t.step("a dropped connection", async () => {
    h.chain.faults.closeConnections(1);
    const res = await h.get(`/v1/wallets/${wallet}/balance`);
    const body = await assertErrorCode(res, 500, "internal");
    assert.ok(!JSON.stringify(body).includes("127.0.0.1"));
  });

  await t.step("the failure is not cached: the next read succeeds", async () => {
    const res = await h.get(`/v1/wallets/${wallet}/balance`);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).lamports, "0");
  });
});

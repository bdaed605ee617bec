// SECRET_NEXT: a rotation announced before it opens, so instances not rotated yet keep working
// beside rotated ones: they open the wallet keys the rotation re-encrypted and accept sessions the
// rotated instances signed. Without it, such an instance answers 502 wallet_unavailable.
import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import { startChain } from "../../sandbox/chain/mod.ts";
import { CookieJar, createTestWallet } from "../support/sign_in.ts";
import {
  callProcess,
  createPayingGame,
  signInOnProcess,
  startProcessFleet,
} from "../support/service_runner.ts";

const OLD = "old-secret-of-the-announced-rotation-aaaaa";
const NEW = "new-secret-of-the-announced-rotation-bbbbb";

/**
 * Given: a game's wallet created on an instance of the old SECRET, a rotation opened by an instance
 * of the new one (which re-encrypts the wallet key under it), and a developer signed in there; then
 * an instance of the old SECRET started with `env` serves the game. Returns what it answers.
 */
async function afterRotation(env: Record<string, string>) {
  const chain = await startChain({ slotMs: 10 });
  try {
    await using fleet = await startProcessFleet(chain.rpcUrl);
    const { start } = fleet;
    const before = await start({ SECRET: OLD, ...env });
    const jar = new CookieJar();
    assert.equal((await signInOnProcess(before, createTestWallet(), { jar })).status, 200);
    const { apiKey } = await createPayingGame(before, jar, chain, "g");
    const rotated = await start({ SECRET: NEW, SECRET_PREVIOUS: OLD });
    const rotatedJar = new CookieJar();
    assert.equal(
      (await signInOnProcess(rotated, createTestWallet(), { jar: rotatedJar })).status,
      200,
    );

    // When: an instance of the old SECRET that never held the key serves the game
    const notRotated = await start({ SECRET: OLD, ...env });
    const to = (await generateKeyPairSigner()).address;
    const paid = await callProcess(notRotated, "/v1/tx/transfer-sol", {
      json: { to: { address: to }, amount: "0.001", idempotencyKey: "beside" },
      headers: { "x-api-key": apiKey },
    });
    const page = await callProcess(notRotated, "/dashboard", { jar: rotatedJar });
    await page.body?.cancel();
    const body = await paid.json();
    return { payout: `${paid.status} ${body.status ?? body.error?.code}`, dashboard: page.status };
  } finally {
    await chain.close();
  }
}

Deno.test("With SECRET_NEXT announced, an instance not rotated yet pays from a wallet the rotation re-encrypted and keeps rotated sessions", async () => {
  const { payout, dashboard } = await afterRotation({ SECRET_NEXT: NEW });
  assert.equal(payout, "200 confirmed");
  assert.equal(dashboard, 200);
});

Deno.test("Without SECRET_NEXT, that instance cannot open the re-encrypted wallet key: 502 wallet_unavailable, nothing sent", async () => {
  const { payout } = await afterRotation({});
  assert.equal(payout, "502 wallet_unavailable");
});

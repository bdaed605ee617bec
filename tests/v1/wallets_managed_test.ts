// Managed wallet providers: creation, encryption at rest, signing, and the `none` provider.
import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { type Address, getAddressEncoder } from "@solana/kit";
import { base58, base64, base64url, hex } from "@scure/base";
import { decryptSecret } from "../../lib/crypto/encryption.ts";
import { walletKeyBinding } from "../../lib/wallets/managed.ts";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { getWalletKey } from "../../kv/wallet_keys.ts";
import { getProject } from "../../kv/projects.ts";
import { ApiError } from "../../core/api_error.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";
import { startTxHarness } from "../support/tx_harness.ts";

async function assertApiError(promise: Promise<unknown>, status: number, code: string) {
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof ApiError);
    assert.deepEqual([error.status, error.code], [status, code]);
    return true;
  });
}

Deno.test("createProjectWallet() creates one wallet per project and refuses a second", async () => {
  await using t = await createTestApp();
  const { project, apiKey } = await createTestProject(t);

  // When: two creations race
  const results = await Promise.allSettled([
    createProjectWallet(t.ctx, project.id),
    createProjectWallet(t.ctx, project.id),
  ]);

  // Then: one wins, the other is refused, and the project shows the winner's address at once
  const won = results.filter((r) => r.status === "fulfilled");
  assert.equal(won.length, 1);
  const address = (won[0] as PromiseFulfilledResult<string>).value;
  const refused = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
  assert.ok(refused.reason instanceof ApiError && refused.reason.code === "wallet_exists");
  assert.equal((await getProject(t.kv, project.id))?.walletAddress, address);
  const view = await (await call(t.app, "/v1/project", { apiKey })).json();
  assert.equal(view.walletAddress, address);
  await assertApiError(createProjectWallet(t.ctx, project.id), 409, "wallet_exists");
  await assertApiError(createProjectWallet(t.ctx, "no-such-project"), 404, "project_not_found");
});

Deno.test("Managed wallet keys are stored only sealed with AES-256-GCM, bound to their project", async () => {
  await using t = await createTestApp();
  const a = (await createTestProject(t)).project;
  const b = (await createTestProject(t)).project;
  const addressA = await createProjectWallet(t.ctx, a.id);
  await createProjectWallet(t.ctx, b.id);
  const recordA = (await getWalletKey(t.kv, a.id))!;
  const recordB = (await getWalletKey(t.kv, b.id))!;

  // The sealed seed opens only with this project's associated data, and derives the address.
  const seed = await decryptSecret(t.ctx.keys, recordA.secretKeyEnc, walletKeyBinding(a.id));
  assert.equal(seed.length, 32);
  assert.deepEqual(
    ed25519.getPublicKey(seed),
    new Uint8Array(getAddressEncoder().encode(addressA as Address)),
  );
  await assert.rejects(decryptSecret(t.ctx.keys, recordA.secretKeyEnc, walletKeyBinding(b.id)));
  // Nor as another purpose of the same project (for example a sealed settings secret).
  await assert.rejects(
    decryptSecret(t.ctx.keys, recordA.secretKeyEnc, { purpose: "publishing_key", context: a.id }),
  );
  // Every sealing uses its own nonce.
  assert.notEqual(recordA.secretKeyEnc.split(".")[3], recordB.secretKeyEnc.split(".")[3]);

  // No stored value holds the seed in any common encoding.
  const forms = [
    hex.encode(seed),
    base64.encode(seed),
    base64url.encode(seed).replace(/=+$/, ""),
    base58.encode(seed),
  ];
  for await (const entry of t.kv.list({ prefix: [] })) {
    const text = JSON.stringify(
      entry.value,
      (_k, v) => v instanceof Uint8Array ? hex.encode(v) : typeof v === "bigint" ? String(v) : v,
    );
    for (const form of forms) {
      assert.ok(!text.includes(form), `seed found under ${String(entry.key)}`);
    }
  }
});

Deno.test("The managed wallet signs transactions, and its key never reaches the logs or an answer", async () => {
  const lines: string[] = [];
  const original = { log: console.log, error: console.error };
  console.log = (...args: unknown[]) => lines.push(args.join(" "));
  console.error = (...args: unknown[]) => lines.push(args.join(" "));
  try {
    await using h = await startTxHarness();
    await h.policy({ maxSolPerTransfer: "1" });
    await h.link(1);
    const res = await h.a.post("transfer-sol", {
      to: { userId: 1 },
      amount: "1",
      idempotencyKey: "k",
    });
    const answer = await res.text();
    assert.equal(JSON.parse(answer).status, "confirmed");
    const seed = await decryptSecret(
      h.a.ctx.keys,
      (await getWalletKey(h.a.kv, h.project.id))!.secretKeyEnc,
      walletKeyBinding(h.project.id),
    );
    // The provider's signature over any message verifies with the wallet's public key.
    const message = new TextEncoder().encode("hello");
    const signature = await h.a.ctx.wallets.signMessage(h.project.id, message);
    assert.ok(
      ed25519.verify(signature, message, new Uint8Array(getAddressEncoder().encode(h.wallet!))),
    );
    const forms = [hex.encode(seed), base64.encode(seed), base58.encode(seed)];
    for (const form of forms) {
      assert.ok(!answer.includes(form));
      assert.ok(lines.every((line) => !line.includes(form)));
    }
    assert.ok(lines.some((line) => line.includes("Managed wallet created")));
  } finally {
    console.log = original.log;
    console.error = original.error;
  }
});

Deno.test("With WALLET_PROVIDER=none: wallets_unavailable, no sending, everything else works", async () => {
  // Given: a project whose wallet was created while managed wallets were on
  await using h = await startTxHarness({ store: "file" });
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(1);
  const sent = await (await h.a.post("transfer-sol", {
    to: { userId: 1 },
    amount: "1",
    idempotencyKey: "before",
  })).json();
  assert.equal(sent.status, "confirmed");
  const off = await h.instance({ config: { walletProvider: "none" } });
  const other = await createTestProject(off);

  // Then
  assert.deepEqual(await (await call(off.app, "/health")).json(), { ok: true, wallets: "none" });
  assert.deepEqual(await (await call(h.a.app, "/health")).json(), {
    ok: true,
    wallets: "managed",
  });
  await assertApiError(
    createProjectWallet(off.ctx, other.project.id),
    503,
    "wallets_unavailable",
  );
  const noWallet = await call(off.app, "/v1/tx/transfer-sol", {
    method: "POST",
    apiKey: other.apiKey,
    json: { to: { userId: 1 }, amount: "1", idempotencyKey: "x" },
  });
  assert.equal((await noWallet.json()).error.code, "wallet_not_configured");
  const cannotSign = await off.post("transfer-sol", {
    to: { userId: 1 },
    amount: "1",
    idempotencyKey: "after",
  });
  assert.equal(cannotSign.status, 502);
  assert.equal((await cannotSign.json()).error.code, "wallet_unavailable");
  assert.equal((await (await off.status("after")).json()).status, "failed");
  // Reads, the status route and the project keep working.
  assert.equal((await (await off.status("before")).json()).status, "confirmed");
  assert.equal((await call(off.app, "/v1/project", { apiKey: h.apiKey })).status, 200);
  assert.equal((await call(off.app, "/v1/players/1/wallet", { apiKey: h.apiKey })).status, 200);
});

Deno.test("A changed SECRET cannot open the wallet key: 502 wallet_unavailable, recorded as failed", async () => {
  await using h = await startTxHarness({ store: "file" });
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(1);
  const rotated = await h.instance({
    config: { secret: "another-secret-another-secret-another-1" },
  });
  const res = await rotated.post("transfer-sol", {
    to: { userId: 1 },
    amount: "1",
    idempotencyKey: "k",
  });
  const body = await res.json();
  assert.deepEqual([res.status, body.error.code], [502, "wallet_unavailable"]);
  assert.match(body.error.message, /cannot be decrypted/);
  const stored = await (await rotated.status("k")).json();
  assert.deepEqual([stored.status, stored.signature, stored.error], [
    "failed",
    null,
    body.error.message,
  ]);
});

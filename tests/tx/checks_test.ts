// The transaction routes' order of checks: each step's error wins over every later step's, and a
// refusal before step 14 never reserves the key.
import assert from "node:assert/strict";
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { createFundedSigner, createMint } from "../../sandbox/chain/fixtures.ts";
import { updateProject } from "../../kv/projects.ts";
import { getTxRequest } from "../../kv/tx_requests.ts";
import { call } from "../support/test_app.ts";
import { startTxHarness, type TxHarness } from "../support/tx_harness.ts";

async function expectError(res: Response, status: number, code: string): Promise<string> {
  const body = await res.json();
  assert.deepEqual(
    { status: res.status, code: body?.error?.code },
    { status, code },
    JSON.stringify(body),
  );
  return body.error.message;
}

/** Asserts the key was not reserved by a refused request. */
async function assertNotReserved(h: TxHarness, key: string): Promise<void> {
  await expectError(await h.a.status(key), 404, "not_found");
}

async function newMint(h: TxHarness, decimals: number): Promise<Address> {
  const payer = await createFundedSigner(h.chain);
  return await createMint(h.chain, { payer, decimals, mintAuthority: h.wallet! });
}

Deno.test("Step 1: a bad API key wins over a bad body", async () => {
  await using h = await startTxHarness({ wallet: false });
  for (const apiKey of [undefined, "blk_live_nope", h.apiKey.slice(0, -1) + "x"]) {
    const res = await call(h.a.app, "/v1/tx/transfer-sol", {
      method: "POST",
      apiKey,
      body: "{oops",
    });
    await expectError(res, 401, "unauthorized");
  }
});

Deno.test("Step 2: the request quota wins over a bad body", async () => {
  await using h = await startTxHarness({ wallet: false });
  const ok = await Promise.all(
    Array.from({ length: 600 }, () => call(h.a.app, "/v1/project", { apiKey: h.apiKey })),
  );
  for (const res of ok) await res.body?.cancel();
  assert.ok(ok.every((res) => res.status === 200));
  const res = await call(h.a.app, "/v1/tx/transfer-sol", {
    method: "POST",
    apiKey: h.apiKey,
    body: "{oops",
  });
  await expectError(res, 429, "rate_limited");
});

Deno.test("Step 2: a payout over the request quota, checked while it was counted, reserves and sends nothing", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const to = await h.link(1);
  const ok = await Promise.all(
    Array.from({ length: 600 }, () => call(h.a.app, "/v1/project", { apiKey: h.apiKey })),
  );
  for (const res of ok) await res.body?.cancel();
  assert.ok(ok.every((res) => res.status === 200));
  const body = { to: { userId: 1 }, amount: "1", idempotencyKey: "over-quota" };
  await expectError(await h.a.post("transfer-sol", body), 429, "rate_limited");
  await expectError(
    await h.a.post("batch", { items: [{ kind: "transfer-sol", ...body }] }),
    429,
    "rate_limited",
  );
  // (the status route is counted too: the store is read directly)
  assert.equal(await getTxRequest(h.a.kv, h.project.id, "over-quota"), null);
  assert.equal((await h.rpc.getBalance(to).send()).value, 0n);
  assert.deepEqual(await h.txEvents(), []);
});

Deno.test("Step 3: a body that is not JSON wins over the schema", async () => {
  await using h = await startTxHarness({ wallet: false });
  for (const body of ["{oops", "", "   "]) {
    const res = await call(h.a.app, "/v1/tx/transfer-token", {
      method: "POST",
      apiKey: h.apiKey,
      body,
      headers: { "content-type": "application/json" },
    });
    await expectError(res, 400, "invalid_json");
  }
});

Deno.test("Step 3: a JSON body sent as another type is invalid_json, before the schema (issue 27)", async (t) => {
  await using h = await startTxHarness({ wallet: false });
  const valid = JSON.stringify({ to: { userId: 1 }, amount: "1", idempotencyKey: "k" });
  const send = (headers: Record<string, string>) =>
    call(h.a.app, "/v1/tx/transfer-sol", {
      method: "POST",
      apiKey: h.apiKey,
      body: valid,
      headers,
    });
  await t.step("text/plain (what fetch labels a bare string) and a form: refused", async () => {
    for (const type of ["text/plain;charset=UTF-8", "application/x-www-form-urlencoded"]) {
      const res = await send({ "content-type": type });
      const message = await expectError(res, 400, "invalid_json");
      assert.match(message, /Content-Type: application\/json/, type);
    }
  });
  await t.step(
    "application/json with parameters, and +json types: read (then step 6)",
    async () => {
      for (
        const type of [
          "application/json; charset=utf-8",
          "Application/JSON",
          "application/vnd.api+json",
        ]
      ) {
        await expectError(await send({ "content-type": type }), 409, "wallet_not_configured");
      }
    },
  );
});

Deno.test("Step 4: the schema wins over the mint address and the wallet", async (t) => {
  await using h = await startTxHarness({ wallet: false });
  const valid = { to: { userId: 1 }, mint: "bad", amount: "1", idempotencyKey: "k" };
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["to with both forms", { ...valid, to: { userId: 1, address: "x" } }, /^to: /],
    ["to with neither", { ...valid, to: {} }, /^to: /],
    ["to with another key", { ...valid, to: { userId: 1, name: "x" } }, /^to: /],
    ["userId zero", { ...valid, to: { userId: 0 } }, /^to: userId must be a positive integer/],
    ["userId as a string", { ...valid, to: { userId: "1" } }, /^to: userId must be a positive/],
    ["address as a number", { ...valid, to: { address: 1 } }, /^to: address must be a string$/],
    ["an unknown field", { ...valid, memo: "x" }, /^body: Unrecognized key: "memo"$/],
    ["amount as a number", { ...valid, amount: 1 }, /^amount: /],
    ["amount with a trailing point", { ...valid, amount: "1." }, /^amount: /],
    ["amount without a whole part", { ...valid, amount: ".5" }, /^amount: /],
    ["negative amount", { ...valid, amount: "-1" }, /^amount: /],
    ["exponent amount", { ...valid, amount: "1e3" }, /^amount: /],
    ["empty key", { ...valid, idempotencyKey: "" }, /^idempotencyKey: /],
    ["129-character key", { ...valid, idempotencyKey: "k".repeat(129) }, /^idempotencyKey: /],
    // `GET /v1/tx/..` is `GET /v1/tx` once a client resolves the URL: such a key is unreadable.
    ["key .", { ...valid, idempotencyKey: "." }, /^idempotencyKey: must not be \. or \.\.$/],
    ["key ..", { ...valid, idempotencyKey: ".." }, /^idempotencyKey: must not be \. or \.\.$/],
    ["missing mint", { to: { userId: 1 }, amount: "1", idempotencyKey: "k" }, /^mint: /],
  ];
  for (const [name, body, message] of cases) {
    await t.step(name, async () => {
      const res = await h.a.post("transfer-token", body);
      assert.match(await expectError(res, 400, "invalid_request"), message);
    });
  }
  await t.step("a 128-character key passes the schema (the wallet check answers)", async () => {
    for (const key of ["k".repeat(128), "🎮".repeat(128)]) {
      const res = await h.a.post("transfer-sol", {
        to: { userId: 1 },
        amount: "1",
        idempotencyKey: key,
      });
      await expectError(res, 409, "wallet_not_configured");
    }
  });
});

Deno.test("Step 5: a mint that is not an address wins over the missing wallet", async () => {
  await using h = await startTxHarness({ wallet: false });
  for (const mint of ["not-an-address", "12345", ""]) {
    const res = await h.a.post("mint-token", {
      to: { userId: 1 },
      mint,
      amount: "1",
      idempotencyKey: "k",
    });
    await expectError(res, 400, "invalid_address");
  }
  await assertNotReserved(h, "k");
});

Deno.test("Step 6: a missing wallet wins over the recipient and the policy", async () => {
  await using h = await startTxHarness({ wallet: false });
  const res = await h.a.post("transfer-sol", {
    to: { userId: 99 },
    amount: "0",
    idempotencyKey: "k",
  });
  await expectError(res, 409, "wallet_not_configured");
  await assertNotReserved(h, "k");
});

Deno.test("Step 7: a key used for another request wins over the recipient and the policy", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(1);
  const first = await h.a.post("transfer-sol", {
    to: { userId: 1 },
    amount: "1",
    idempotencyKey: "k",
  });
  assert.equal((await first.json()).status, "confirmed");
  // SOL transfers are now disabled, and player 2 has no wallet.
  await h.policy({});
  const res = await h.a.post("transfer-sol", {
    to: { userId: 2 },
    amount: "1",
    idempotencyKey: "k",
  });
  await expectError(res, 409, "idempotency_conflict");
  // The same request is answered with the stored attempt before any later check.
  const same = await h.a.post("transfer-sol", {
    to: { userId: 1 },
    amount: "1",
    idempotencyKey: "k",
  });
  assert.equal(same.status, 200);
  assert.equal((await same.json()).status, "confirmed");
});

Deno.test("Step 8: an unresolvable recipient wins over the policy", async () => {
  await using h = await startTxHarness();
  const unlinked = await h.a.post("transfer-sol", {
    to: { userId: 5 },
    amount: "1",
    idempotencyKey: "k",
  });
  await expectError(unlinked, 404, "wallet_not_linked");
  for (const address of ["12345", "0OIl", "x".repeat(44)]) {
    const res = await h.a.post("transfer-sol", {
      to: { address },
      amount: "1",
      idempotencyKey: "k",
    });
    await expectError(res, 400, "invalid_address");
  }
  await assertNotReserved(h, "k");
});

Deno.test("Step 8: SOL to a program the transfer calls is invalid_address, not a 500 after reserving the key", async () => {
  // Given a policy that allows SOL, on mainnet (whose transfers also call the compute budget)
  await using h = await startTxHarness({ cluster: "mainnet" });
  await h.policy({ maxSolPerTransfer: "1" });
  for (
    const program of [
      "11111111111111111111111111111111",
      "ComputeBudget111111111111111111111111111111",
      "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
    ]
  ) {
    // When
    const res = await h.a.post("transfer-sol", {
      to: { address: program },
      amount: "0.1",
      idempotencyKey: `to-${program}`,
    });
    // Then: refused at step 8 with a clear message, nothing reserved
    const message = await expectError(res, 400, "invalid_address");
    assert.match(message, /a program the transfer itself calls/);
    await assertNotReserved(h, `to-${program}`);
  }
  // A token transfer only writes the recipient's token account: the same owner is fine there.
  const mint = await createMint(h.chain, { payer: await createFundedSigner(h.chain), decimals: 0 });
  await h.policy({ maxSolPerTransfer: "1", allowedMints: [{ mint, maxPerTransaction: "5" }] });
  const token = await h.a.post("transfer-token", {
    to: { address: "11111111111111111111111111111111" },
    mint,
    amount: "1",
    idempotencyKey: "token-to-system",
  });
  assert.deepEqual(token.status, 200);
  await token.body?.cancel();
});

Deno.test("Step 9: a disallowed asset wins over the mint and the amount", async () => {
  await using h = await startTxHarness();
  const to = await h.link(1);
  const sol = await h.a.post("transfer-sol", {
    to: { address: to },
    amount: "0",
    idempotencyKey: "k",
  });
  await expectError(sol, 403, "sol_transfers_disabled");
  const unknownMint = (await generateKeyPairSigner()).address;
  await h.policy({ maxSolPerTransfer: "1" });
  const token = await h.a.post("transfer-token", {
    to: { userId: 1 },
    mint: unknownMint,
    amount: "0",
    idempotencyKey: "k",
  });
  await expectError(token, 403, "mint_not_allowed");
  await assertNotReserved(h, "k");
});

Deno.test("Step 10: an allowed mint missing on the cluster wins over the amount", async () => {
  await using h = await startTxHarness();
  await h.link(1);
  const missing = (await generateKeyPairSigner()).address;
  const notAMint = h.wallet!;
  await h.policy({
    allowedMints: [
      { mint: missing, maxPerTransaction: "10" },
      { mint: notAMint, maxPerTransaction: "10" },
    ],
  });
  for (const mint of [missing, notAMint]) {
    const res = await h.a.post("transfer-token", {
      to: { userId: 1 },
      mint,
      amount: "1.00000000000000000001",
      idempotencyKey: "k",
    });
    await expectError(res, 400, "invalid_mint");
  }
  await assertNotReserved(h, "k");
});

Deno.test("Step 11: the amount and the per-transaction limit win over the hourly limits", async (t) => {
  await using h = await startTxHarness();
  const mint = await newMint(h, 0);
  await h.link(1);
  await h.policy({
    maxSolPerTransfer: "2",
    allowedMints: [{ mint, maxPerTransaction: "1.5" }],
    perRecipientPerHour: 1,
  });
  // The recipient's hourly limit is now used up.
  const first = await h.a.post("transfer-sol", {
    to: { userId: 1 },
    amount: "1",
    idempotencyKey: "used",
  });
  assert.equal((await first.json()).status, "confirmed");
  const sol = (amount: string) =>
    h.a.post("transfer-sol", { to: { userId: 1 }, amount, idempotencyKey: "k" });

  await t.step("zero", async () => {
    await expectError(await sol("0.000"), 400, "invalid_amount");
  });
  await t.step("more decimals than SOL has", async () => {
    await expectError(await sol("0.0000000001"), 400, "invalid_amount");
    await expectError(await sol("1.0000000000"), 400, "invalid_amount");
  });
  await t.step("above u64", async () => {
    await expectError(await sol("18446744073.709551616"), 400, "invalid_amount");
  });
  await t.step("over the maximum", async () => {
    await expectError(await sol("2.000000001"), 403, "amount_over_limit");
  });
  await t.step("a maximum the mint's decimals cannot represent", async () => {
    const res = await h.a.post("mint-token", {
      to: { userId: 1 },
      mint,
      amount: "1",
      idempotencyKey: "k",
    });
    await expectError(res, 422, "invalid_limit_config");
  });
  await t.step("more decimals than the mint has", async () => {
    const res = await h.a.post("mint-token", {
      to: { userId: 1 },
      mint,
      amount: "1.0",
      idempotencyKey: "k",
    });
    await expectError(res, 400, "invalid_amount");
  });
  await t.step("within every check up to 11, the hourly limit answers", async () => {
    await expectError(await sol("2"), 429, "recipient_rate_limited");
  });
  await assertNotReserved(h, "k");
});

Deno.test("Step 13: recipient, then player, then the asset budget", async () => {
  await using h = await startTxHarness();
  const mint = await newMint(h, 0);
  const first = await h.link(1);
  await h.policy({
    maxSolPerTransfer: "10",
    allowedMints: [{ mint, maxPerTransaction: "100" }],
    perRecipientPerHour: 1,
    perPlayerPerHour: 2,
    hourlyBudgets: [{ asset: "SOL", amount: "3" }, { asset: mint, amount: "0.5" }],
  });
  const send = (to: unknown, amount: string, key: string) =>
    h.a.post("transfer-sol", { to, amount, idempotencyKey: key });
  assert.equal((await (await send({ userId: 1 }, "1", "a")).json()).status, "confirmed");

  // The wallet received its one transaction: recipient wins over the budget (1 + 5 > 3).
  await expectError(await send({ address: first }, "5", "k"), 429, "recipient_rate_limited");
  // The player's next wallet: one more transaction for the player is still allowed.
  await h.link(1);
  assert.equal((await (await send({ userId: 1 }, "1", "b")).json()).status, "confirmed");
  // Now the player has two: player wins over the budget.
  const third = await h.link(1);
  await expectError(await send({ address: third }, "5", "k"), 429, "player_rate_limited");
  // Another player: only the budget is left (2 of 3 SOL used this hour).
  await h.link(2);
  await expectError(await send({ userId: 2 }, "1.5", "k"), 429, "hourly_budget_exceeded");
  assert.equal((await (await send({ userId: 2 }, "1", "c")).json()).status, "confirmed");
  // A budget the mint's decimals cannot represent answers at the budget's place.
  await h.link(3);
  const res = await h.a.post("mint-token", {
    to: { userId: 3 },
    mint,
    amount: "1",
    idempotencyKey: "k",
  });
  await expectError(res, 422, "invalid_limit_config");
  await assertNotReserved(h, "k");
});

Deno.test("Step 14: a wallet that cannot sign answers 502 wallet_unavailable, recorded as failed", async () => {
  await using h = await startTxHarness({ wallet: false });
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(1);
  // The project has a wallet address, but this service holds no key for it.
  const stranger = (await generateKeyPairSigner()).address;
  await updateProject(h.a.kv, h.project.id, (p) => ({ ...p, walletAddress: stranger }));
  const res = await h.a.post("transfer-sol", {
    to: { userId: 1 },
    amount: "1",
    idempotencyKey: "k",
  });
  const message = await expectError(res, 502, "wallet_unavailable");
  const stored = await (await h.a.status("k")).json();
  assert.deepEqual([stored.status, stored.signature, stored.error], ["failed", null, message]);
  const events = await h.txEvents();
  assert.deepEqual(events.map((e) => [e.status, e.signature ?? null, e.error]), [[
    "failed",
    null,
    message,
  ]]);
});

// Token transfers and mints under both token programs, and mainnet's compute budget.
import assert from "node:assert/strict";
import { type Address, generateKeyPairSigner, type Signature } from "@solana/kit";
import { TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { base58 } from "@scure/base";
import { TOKEN_2022_PROGRAM } from "../../lib/chain/mints.ts";
import {
  choosePrice,
  MAX_MICRO_LAMPORTS_PER_CU,
  MIN_MICRO_LAMPORTS_PER_CU,
} from "../../lib/tx/build/priority_fee.ts";
import { createFundedSigner, createMint, findAta } from "../../sandbox/chain/fixtures.ts";
import {
  fundWalletWithTokens,
  okJson,
  startTxHarness,
  type TxHarness,
} from "../support/tx_harness.ts";

const PROGRAMS: Array<[string, Address]> = [
  ["Token", TOKEN_PROGRAM_ADDRESS],
  ["Token-2022", TOKEN_2022_PROGRAM],
];

async function tokenBalance(h: TxHarness, owner: Address, mint: Address, program: Address) {
  const ata = await findAta(owner, mint, program);
  const { value } = await h.rpc.getAccountInfo(ata, { encoding: "base64" }).send();
  if (!value) return null;
  assert.equal(value.owner, program);
  return (await h.rpc.getTokenAccountBalance(ata).send()).value.amount;
}

for (const [name, program] of PROGRAMS) {
  Deno.test(`POST /v1/tx/transfer-token moves ${name} tokens, creating the recipient's account`, async () => {
    await using h = await startTxHarness();
    // Given: a mint of another authority, and tokens in the managed wallet
    const mint = await fundWalletWithTokens(h, { tokenProgram: program });
    await h.policy({ allowedMints: [{ mint, maxPerTransaction: "5" }] });
    const player = await h.link(8);
    const before = (await h.rpc.getBalance(h.wallet!).send()).value;

    // When
    const result = await okJson(
      await h.a.post("transfer-token", {
        to: { userId: 8 },
        mint,
        amount: "2.5",
        idempotencyKey: "t1",
      }),
    );

    // Then
    assert.equal(result.status, "confirmed");
    assert.equal(result.kind, "transfer-token");
    assert.equal(result.recipient, player);
    assert.equal(await tokenBalance(h, player, mint, program), "2500000");
    assert.equal(await tokenBalance(h, h.wallet!, mint, program), "7500000");
    // The managed wallet paid for the new account (rent) and the fee.
    const after = (await h.rpc.getBalance(h.wallet!).send()).value;
    assert.ok(before - after > 1_000_000n);
    // Again: the account exists now, and the idempotent create does not fail.
    const again = await okJson(
      await h.a.post("transfer-token", {
        to: { userId: 8 },
        mint,
        amount: "1",
        idempotencyKey: "t2",
      }),
    );
    assert.equal(again.status, "confirmed");
    assert.equal(await tokenBalance(h, player, mint, program), "3500000");
  });

  Deno.test(`POST /v1/tx/mint-token mints ${name} tokens when the wallet is the mint authority`, async () => {
    await using h = await startTxHarness();
    const payer = await createFundedSigner(h.chain);
    const mint = await createMint(h.chain, {
      payer,
      decimals: 0,
      mintAuthority: h.wallet!,
      tokenProgram: program,
    });
    await h.policy({ allowedMints: [{ mint, maxPerTransaction: "100" }] });
    const player = (await generateKeyPairSigner()).address;

    const result = await okJson(
      await h.a.post("mint-token", {
        to: { address: player },
        mint,
        amount: "42",
        idempotencyKey: "m1",
      }),
    );

    assert.equal(result.status, "confirmed");
    assert.equal(await tokenBalance(h, player, mint, program), "42");
    const events = await h.txEvents();
    assert.deepEqual(events.map((e) => [e.kind, e.status, e.userId ?? null]), [
      ["mint-token", "confirmed", null],
    ]);
  });
}

Deno.test("The rent of a recipient's new token account is paid outside the hourly SOL budget (README)", async () => {
  await using h = await startTxHarness();
  const payer = await createFundedSigner(h.chain);
  const mint = await createMint(h.chain, { payer, decimals: 0, mintAuthority: h.wallet! });
  // Given: an hourly SOL budget below the rent of one token account (0.00203928 SOL).
  await h.policy({
    maxSolPerTransfer: "1",
    allowedMints: [{ mint, maxPerTransaction: "100" }],
    hourlyBudgets: [{ asset: "SOL", amount: "0.002" }],
  });
  const before = (await h.rpc.getBalance(h.wallet!).send()).value;

  // When: two mints each create a recipient's account.
  for (const key of ["rent-1", "rent-2"]) {
    const to = { address: (await generateKeyPairSigner()).address };
    const minted = await okJson(
      await h.a.post("mint-token", { to, mint, amount: "1", idempotencyKey: key }),
    );
    assert.equal(minted.status, "confirmed");
  }

  // Then: the wallet paid both rents, and the whole SOL budget is still there to send.
  const after = (await h.rpc.getBalance(h.wallet!).send()).value;
  assert.ok(before - after >= 2n * 2_039_280n, `${before - after} lamports spent`);
  const to = { address: (await generateKeyPairSigner()).address };
  const sent = await okJson(
    await h.a.post("transfer-sol", { to, amount: "0.002", idempotencyKey: "sol-1" }),
  );
  assert.equal(sent.status, "confirmed");
});

Deno.test("POST /v1/tx/mint-token without mint authority answers 200 failed with the simulation error", async () => {
  await using h = await startTxHarness();
  const issuer = await createFundedSigner(h.chain);
  const mint = await createMint(h.chain, { payer: issuer, decimals: 2 });
  await h.policy({ allowedMints: [{ mint, maxPerTransaction: "100" }] });
  const player = await h.link(4);

  const result = await okJson(
    await h.a.post("mint-token", {
      to: { userId: 4 },
      mint,
      amount: "1.25",
      idempotencyKey: "nope",
    }),
  );

  assert.equal(result.status, "failed");
  assert.match(
    String(result.error),
    /Solana error #-32002; Decode this error by running `npx @solana\/errors decode -- -32002/,
  );
  assert.equal(await tokenBalance(h, player, mint, TOKEN_PROGRAM_ADDRESS), null);
  const events = await h.txEvents();
  assert.deepEqual(events.map((e) => [e.status, e.userId]), [["failed", 4]]);
});

Deno.test("POST /v1/tx/transfer-token with an empty managed token account answers 200 failed", async () => {
  await using h = await startTxHarness();
  const issuer = await createFundedSigner(h.chain);
  const mint = await createMint(h.chain, {
    payer: issuer,
    decimals: 9,
    tokenProgram: TOKEN_2022_PROGRAM,
  });
  await h.policy({ allowedMints: [{ mint, maxPerTransaction: "1" }] });
  await h.link(4);
  const result = await okJson(
    await h.a.post("transfer-token", {
      to: { userId: 4 },
      mint,
      amount: "0.5",
      idempotencyKey: "empty",
    }),
  );
  assert.equal(result.status, "failed");
  assert.match(String(result.error), /-32002/);
});

/** Compute budget instructions of a landed transaction: [unit limit, unit price] or null. */
async function computeBudget(h: TxHarness, signature: Signature): Promise<[number, bigint] | null> {
  const tx = await h.rpc.getTransaction(signature, {
    encoding: "json",
    maxSupportedTransactionVersion: 0,
    commitment: "confirmed",
  }).send();
  assert.ok(tx);
  const keys = tx.transaction.message.accountKeys;
  let limit: number | null = null;
  let price: bigint | null = null;
  for (const ix of tx.transaction.message.instructions) {
    if (keys[ix.programIdIndex] !== "ComputeBudget111111111111111111111111111111") continue;
    const data = base58.decode(ix.data);
    const view = new DataView(data.buffer);
    if (data[0] === 2) limit = view.getUint32(1, true);
    if (data[0] === 3) price = view.getBigUint64(1, true);
  }
  return limit === null || price === null ? null : [limit, price];
}

Deno.test("On mainnet, transactions carry a compute-unit limit and a priority fee; on devnet they do not", async (t) => {
  for (const cluster of ["mainnet", "devnet"] as const) {
    await t.step(cluster, async () => {
      await using h = await startTxHarness({ cluster });
      await h.policy({ maxSolPerTransfer: "1" });
      await h.link(1);
      const result = await okJson(
        await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1", idempotencyKey: "fee" }),
      );
      assert.equal(result.status, "confirmed");
      const budget = await computeBudget(h, result.signature as Signature);
      if (cluster === "devnet") {
        assert.equal(budget, null);
        return;
      }
      assert.ok(budget);
      assert.equal(budget[0], 2_000);
      assert.ok(budget[1] >= MIN_MICRO_LAMPORTS_PER_CU && budget[1] <= MAX_MICRO_LAMPORTS_PER_CU);
    });
  }
});

Deno.test("choosePrice() takes the 75th percentile of recent fees within the bounds", () => {
  assert.equal(choosePrice([]), MIN_MICRO_LAMPORTS_PER_CU);
  assert.equal(choosePrice([0n, 0n, 0n]), MIN_MICRO_LAMPORTS_PER_CU);
  assert.equal(choosePrice([10_000n, 20_000n, 30_000n, 40_000n]), 40_000n);
  assert.equal(choosePrice([5_000n, 1n, 7_000n, 3_000n, 9_000n, 2n, 4_000n, 8_000n]), 8_000n);
  assert.equal(choosePrice([10n ** 12n, 10n ** 12n]), MAX_MICRO_LAMPORTS_PER_CU);
});

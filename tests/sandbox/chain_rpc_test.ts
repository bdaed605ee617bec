import assert from "node:assert/strict";
import {
  address,
  appendTransactionMessageInstruction,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionEncoder,
  isSolanaError,
  lamports,
  pipe,
  setTransactionMessageComputeUnitPrice,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type Signature,
  signTransactionMessageWithSigners,
  SOLANA_ERROR__JSON_RPC__INVALID_PARAMS,
  SOLANA_ERROR__JSON_RPC__METHOD_NOT_FOUND,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { createFundedSigner, createMint, mintTo, startChain } from "../../sandbox/chain/mod.ts";

const TOKEN = address("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");

async function raw(url: string, method: string, params?: unknown) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return await response.json();
}

Deno.test("sandbox chain answers cluster methods like a node", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  assert.equal(await rpc.getHealth().send(), "ok");
  assert.ok((await rpc.getVersion().send())["solana-core"]);
  const processed = await rpc.getSlot({ commitment: "processed" }).send();
  const confirmed = await rpc.getSlot({ commitment: "confirmed" }).send();
  const finalized = await rpc.getSlot({ commitment: "finalized" }).send();
  assert.equal(processed - confirmed, 1n);
  assert.equal(processed - finalized, 32n);
  chain.advanceSlots(3);
  assert.equal(await rpc.getSlot({ commitment: "processed" }).send(), processed + 3n);
  const height = await rpc.getBlockHeight({ commitment: "processed" }).send();
  const { value: latest, context } = await rpc.getLatestBlockhash({ commitment: "processed" })
    .send();
  assert.equal(context.slot, processed + 3n);
  assert.equal(latest.lastValidBlockHeight, height + 150n);
  assert.equal(
    (await rpc.isBlockhashValid(latest.blockhash, { commitment: "processed" }).send()).value,
    true,
  );
  // Not yet known to the finalized bank.
  assert.equal(
    (await rpc.isBlockhashValid(latest.blockhash, { commitment: "finalized" }).send()).value,
    false,
  );
  chain.advanceSlots(151);
  assert.equal(
    (await rpc.isBlockhashValid(latest.blockhash, { commitment: "processed" }).send()).value,
    false,
  );
  assert.equal(await rpc.getMinimumBalanceForRentExemption(0n).send(), 890880n);
  assert.equal(await rpc.getMinimumBalanceForRentExemption(165n).send(), 2039280n);

  const missing = await (rpc as unknown as { getBlock(slot: bigint): { send(): Promise<unknown> } })
    .getBlock(1n).send().then(() => null, (e) => e);
  assert.ok(isSolanaError(missing, SOLANA_ERROR__JSON_RPC__METHOD_NOT_FOUND));
  const badKey = await raw(chain.rpcUrl, "getBalance", ["not-a-key!"]);
  assert.deepEqual(badKey.error, { code: -32602, message: "Invalid param: Invalid" });
  const batch = await fetch(chain.rpcUrl, {
    method: "POST",
    body: JSON.stringify([
      { jsonrpc: "2.0", id: 1, method: "getHealth" },
      { jsonrpc: "2.0", id: 2, method: "getSlot" },
    ]),
  }).then((r) => r.json());
  assert.deepEqual(batch.map((r: { id: number }) => r.id), [1, 2]);
  const parse = await fetch(chain.rpcUrl, { method: "POST", body: "{" }).then((r) => r.json());
  assert.equal(parse.error.code, -32700);
});

Deno.test("sandbox chain answers account reads in every encoding", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const payer = await createFundedSigner(chain);
  const holder = (await generateKeyPairSigner()).address;
  const mint = await createMint(chain, { payer, decimals: 2 });
  const { tokenAccount } = await mintTo(chain, {
    payer,
    mint,
    authority: payer,
    owner: holder,
    amount: 12345n,
    decimals: 2,
  });

  const parsedMint = await rpc.getAccountInfo(mint, { encoding: "jsonParsed" }).send();
  assert.deepEqual(parsedMint.value?.data, {
    program: "spl-token",
    parsed: {
      info: {
        decimals: 2,
        freezeAuthority: null,
        isInitialized: true,
        mintAuthority: payer.address,
        supply: "12345",
      },
      type: "mint",
    },
    space: 82n,
  });
  const wallet = await rpc.getAccountInfo(payer.address, { encoding: "jsonParsed" }).send();
  assert.deepEqual(wallet.value?.data, ["", "base64"]);
  const rawWallet = await raw(chain.rpcUrl, "getAccountInfo", [payer.address, {
    encoding: "base64",
    commitment: "confirmed",
  }]);
  assert.equal(rawWallet.result.value.rentEpoch, 18446744073709551615);
  const sliced = await rpc.getAccountInfo(tokenAccount, {
    encoding: "base64",
    dataSlice: { offset: 32, length: 32 },
  }).send();
  assert.equal(sliced.value?.data[0].length, 44);
  const tooLong = await raw(chain.rpcUrl, "getAccountInfo", [tokenAccount, {
    encoding: "base58",
    commitment: "confirmed",
  }]);
  assert.equal(tooLong.error.code, -32600);
  const many = await rpc.getMultipleAccounts([mint, holder], { encoding: "base64" }).send();
  assert.equal(many.value[0]?.owner, TOKEN);
  assert.equal(many.value[1], null);

  const filtered = await rpc.getProgramAccounts(TOKEN, {
    encoding: "base64",
    filters: [
      { dataSize: 165n },
      { memcmp: { offset: 32n, bytes: holder as string as never, encoding: "base58" } },
    ],
  }).send();
  assert.deepEqual(filtered.map((a) => a.pubkey), [tokenAccount]);
  const balance = await rpc.getTokenAccountBalance(tokenAccount).send();
  assert.deepEqual(balance.value, {
    amount: "12345",
    decimals: 2,
    uiAmount: 123.45,
    uiAmountString: "123.45",
  });
  const notToken = await raw(chain.rpcUrl, "getTokenAccountBalance", [mint, {
    commitment: "confirmed",
  }]);
  assert.deepEqual(notToken.error, {
    code: -32602,
    message: "Invalid param: not a Token account",
  });
  const badProgram = await raw(chain.rpcUrl, "getTokenAccountsByOwner", [holder, {
    programId: payer.address,
  }]);
  assert.deepEqual(badProgram.error, {
    code: -32602,
    message: "Invalid param: unrecognized Token program id",
  });
});

Deno.test("sandbox chain answers transaction methods like a node", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const sender = await createFundedSigner(chain);
  const other = await generateKeyPairSigner();
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const tx = await signTransactionMessageWithSigners(pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(sender, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => setTransactionMessageComputeUnitPrice(5_000n, m),
    (m) =>
      appendTransactionMessageInstruction(
        getTransferSolInstruction({
          source: sender,
          destination: other.address,
          amount: lamports(10_000_000n),
        }),
        m,
      ),
  ));
  const signature = getSignatureFromTransaction(tx);

  // A forged signature fails sigverify with -32003.
  const forged = {
    ...tx,
    signatures: { ...tx.signatures, [sender.address]: new Uint8Array(64).fill(7) },
  };
  const forgedError = await rpc.sendTransaction(
    getBase64EncodedWireTransaction(forged as typeof tx),
    {
      encoding: "base64",
      preflightCommitment: "confirmed",
    },
  ).send().then(() => null, (e) => e);
  assert.ok(
    isSolanaError(
      forgedError,
      SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
    ),
  );

  // base58 is the default wire encoding.
  const base58Wire = getBase58Decoder().decode(getTransactionEncoder().encode(tx));
  const sent = await raw(chain.rpcUrl, "sendTransaction", [base58Wire, {
    preflightCommitment: "confirmed",
  }]);
  assert.equal(sent.result, signature);

  const unknown = (await generateKeyPairSigner(), "1".repeat(64)) as Signature;
  const { value: statuses } = await rpc.getSignatureStatuses([signature, unknown]).send();
  assert.equal(statuses[0]?.slot, BigInt(chain.clock().slot));
  assert.deepEqual(statuses[0]?.status, { Ok: null });
  assert.equal(statuses[1], null);

  const processedRead = await rpc.getTransaction(signature, {
    commitment: "processed" as "confirmed",
    encoding: "json",
    maxSupportedTransactionVersion: 0,
  }).send().then(() => null, (e) => e);
  assert.ok(isSolanaError(processedRead, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS));
  assert.equal(
    await rpc.getTransaction(signature, { encoding: "json", maxSupportedTransactionVersion: 0 })
      .send(),
    null,
  );
  chain.advanceSlots(1);
  const legacyClient = await rpc.getTransaction(signature).send().then(() => null, (e) => e);
  assert.ok(
    isSolanaError(
      legacyClient,
      SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION,
    ),
  );
  const full = await rpc.getTransaction(signature, {
    encoding: "base64",
    maxSupportedTransactionVersion: 0,
  }).send();
  assert.equal(full?.transaction[0], getBase64EncodedWireTransaction(tx));
  assert.equal(full?.version, 0);
  // 5,000 per signature plus ceil(5,000 micro-lamports x 200,000 CU / 1e6).
  assert.equal(full?.meta?.fee, 5000n + 1000n);

  const fees = await rpc.getRecentPrioritizationFees([sender.address]).send();
  assert.equal(fees.find((f) => f.slot === statuses[0]?.slot)?.prioritizationFee, 5000n);

  // Past the status cache, only searchTransactionHistory finds the signature.
  chain.advanceSlots(310);
  assert.equal((await rpc.getSignatureStatuses([signature]).send()).value[0], null);
  const searched = await rpc.getSignatureStatuses([signature], { searchTransactionHistory: true })
    .send();
  assert.equal(searched.value[0]?.confirmationStatus, "finalized");
});

Deno.test("startChain() advances on its own clock when autoAdvance is on", async () => {
  await using chain = await startChain({ slotMs: 5 });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const start = await rpc.getSlot({ commitment: "processed" }).send();
  const signer = await createFundedSigner(chain, { commitment: "finalized" });
  assert.ok((await rpc.getSlot({ commitment: "processed" }).send()) >= start + 32n);
  assert.equal(
    (await rpc.getBalance(signer.address, { commitment: "finalized" }).send()).value,
    10_000_000_000n,
  );
});

import assert from "node:assert/strict";
import {
  type Blockhash,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  getTransactionEncoder,
  isSolanaError,
  SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
} from "@solana/kit";
import { startChain } from "../../sandbox/chain/mod.ts";
import { createFundedSigner, signSolTransfer } from "../../sandbox/chain/fixtures.ts";

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail("Expected the request to fail");
}

Deno.test("sendTransaction() fails preflight with -32002 when the sender is short of funds", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  // Given
  const sender = await createFundedSigner(chain, { lamports: 1_000_000n });
  const recipient = await generateKeyPairSigner();
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const tx = await signSolTransfer(sender, recipient.address, 5_000_000n, latest);

  // When
  const error = await rejection(
    rpc.sendTransaction(getBase64EncodedWireTransaction(tx), {
      encoding: "base64",
      preflightCommitment: "confirmed",
    }).send(),
  );

  // Then
  assert.ok(
    isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE),
  );
  assert.ok(isSolanaError(error.cause, SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM));
  assert.equal(error.cause.context.code, 1);
  assert.ok(error.context.logs?.some((l) => l.includes("insufficient lamports")));
  const { value: [status] } = await rpc.getSignatureStatuses([getSignatureFromTransaction(tx)])
    .send();
  assert.equal(status, null);
});

Deno.test("sendTransaction() answers the real node's raw error shape", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const sender = await createFundedSigner(chain, { lamports: 1_000_000n });
  const recipient = await generateKeyPairSigner();
  const rpc = createSolanaRpc(chain.rpcUrl);
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const tx = await signSolTransfer(sender, recipient.address, 5_000_000n, latest);
  const wire = getBase58Decoder().decode(getTransactionEncoder().encode(tx));
  const response = await fetch(chain.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "sendTransaction",
      params: [wire, { preflightCommitment: "confirmed" }],
    }),
  });
  const body = await response.json();
  assert.equal(body.id, 7);
  assert.equal(body.error.code, -32002);
  assert.equal(
    body.error.message,
    "Transaction simulation failed: Error processing Instruction 0: custom program error: 0x1",
  );
  assert.deepEqual(body.error.data.err, { InstructionError: [0, { Custom: 1 }] });
  assert.ok(Array.isArray(body.error.data.logs));
});

Deno.test("sendTransaction() refuses an expired blockhash like a real node", async (t) => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const sender = await createFundedSigner(chain);
  const recipient = await generateKeyPairSigner();
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const tx = await signSolTransfer(sender, recipient.address, 1_000_000_000n, latest);
  const wire = getBase64EncodedWireTransaction(tx);
  chain.advanceSlots(200);

  await t.step("with preflight: -32002 Blockhash not found", async () => {
    const error = await rejection(
      rpc.sendTransaction(wire, { encoding: "base64", preflightCommitment: "confirmed" }).send(),
    );
    assert.ok(
      isSolanaError(
        error,
        SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
      ),
    );
    assert.ok(isSolanaError(error.cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND));
    const valid = await rpc.isBlockhashValid(latest.blockhash, { commitment: "processed" })
      .send();
    assert.equal(valid.value, false);
  });

  await t.step("with skipPreflight: accepted, then dropped and never seen", async () => {
    const signature = await rpc.sendTransaction(wire, { encoding: "base64", skipPreflight: true })
      .send();
    assert.equal(signature, getSignatureFromTransaction(tx));
    chain.advanceSlots(40);
    const { value: [status] } = await rpc.getSignatureStatuses([signature], {
      searchTransactionHistory: true,
    }).send();
    assert.equal(status, null);
    const balance = await rpc.getBalance(recipient.address, { commitment: "processed" }).send();
    assert.equal(balance.value, 0n);
  });
});

Deno.test("sendTransaction() checks the blockhash against the preflight commitment's bank", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const sender = await createFundedSigner(chain);
  const recipient = await generateKeyPairSigner();
  const { value: latest } = await rpc.getLatestBlockhash({ commitment: "processed" }).send();
  const tx = await signSolTransfer(sender, recipient.address, 1_000_000_000n, latest);
  const wire = getBase64EncodedWireTransaction(tx);

  // A processed blockhash is unknown to the finalized bank the node preflights against by default.
  const error = await rejection(rpc.sendTransaction(wire, { encoding: "base64" }).send());
  assert.ok(
    isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE),
  );
  assert.ok(isSolanaError(error.cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND));

  // Given a transaction on a confirmed blockhash that has landed (processed only)
  const { value: confirmed } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
  const landed = await signSolTransfer(sender, recipient.address, 1_000_000_000n, confirmed);
  const landedWire = getBase64EncodedWireTransaction(landed);
  await rpc.sendTransaction(landedWire, { encoding: "base64", preflightCommitment: "confirmed" })
    .send();
  // Rebroadcasting a landed transaction is answered with its signature until the preflight
  // bank knows it; then preflight reports AlreadyProcessed.
  const again = await rpc.sendTransaction(landedWire, {
    encoding: "base64",
    preflightCommitment: "confirmed",
  }).send();
  assert.equal(again, getSignatureFromTransaction(landed));
  chain.advanceSlots(1);
  const duplicate = await rejection(
    rpc.sendTransaction(landedWire, { encoding: "base64", preflightCommitment: "confirmed" })
      .send(),
  );
  assert.ok(
    isSolanaError(
      duplicate,
      SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
    ),
  );
  assert.ok(isSolanaError(duplicate.cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED));
});

Deno.test("simulateTransaction() reports errors in the value and replaces the blockhash", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  const sender = await createFundedSigner(chain, { lamports: 1_000_000n });
  const recipient = await generateKeyPairSigner();
  const stale = {
    blockhash: "11111111111111111111111111111111" as Blockhash,
    lastValidBlockHeight: 0n,
  };
  const tx = await signSolTransfer(sender, recipient.address, 5_000_000n, stale);
  const wire = getBase64EncodedWireTransaction(tx);

  const plain = await rpc.simulateTransaction(wire, {
    encoding: "base64",
    commitment: "confirmed",
  })
    .send();
  assert.equal(plain.value.err, "BlockhashNotFound");

  const replaced = await rpc.simulateTransaction(wire, {
    encoding: "base64",
    commitment: "confirmed",
    replaceRecentBlockhash: true,
  }).send();
  assert.deepEqual(replaced.value.err, { InstructionError: [0n, { Custom: 1n }] });
  assert.ok(replaced.value.replacementBlockhash?.blockhash);
  assert.ok((replaced.value.unitsConsumed ?? 0n) > 0n);
});

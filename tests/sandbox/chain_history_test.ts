import assert from "node:assert/strict";
import {
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  isSolanaError,
  type Signature,
  SOLANA_ERROR__JSON_RPC__INVALID_PARAMS,
} from "@solana/kit";
import { startChain } from "../../sandbox/chain/mod.ts";
import { createFundedSigner, signSolTransfer } from "../../sandbox/chain/fixtures.ts";

Deno.test("getSignaturesForAddress() pages newest first across more than 1,000 signatures", async () => {
  await using chain = await startChain({ autoAdvance: false });
  const rpc = createSolanaRpc(chain.rpcUrl);
  // Given 1,105 transfers to one wallet over several slots, one of them failing
  const sender = await createFundedSigner(chain, { lamports: 100_000_000_000n });
  const recipient = await generateKeyPairSigner();
  const sent: Signature[] = [];
  let failed: Signature | null = null;
  for (let i = 0; i < 1105; i++) {
    if (i % 100 === 0) chain.advanceSlots(1);
    const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
    const tooMuch = i === 700;
    const amount = tooMuch ? 10n ** 15n : 1_000_000n + BigInt(i);
    const tx = await signSolTransfer(sender, recipient.address, amount, latest);
    const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(tx), {
      encoding: "base64",
      skipPreflight: tooMuch,
      preflightCommitment: "confirmed",
    }).send();
    sent.push(signature);
    if (tooMuch) failed = signature;
  }
  chain.advanceSlots(1);
  const newestFirst = [...sent].reverse();

  // When
  const first = await rpc.getSignaturesForAddress(recipient.address, { commitment: "confirmed" })
    .send();
  const oldestOfFirst = first.at(-1);
  assert.ok(oldestOfFirst);
  const second = await rpc.getSignaturesForAddress(recipient.address, {
    commitment: "confirmed",
    before: oldestOfFirst.signature,
  }).send();

  // Then
  assert.equal(first.length, 1000);
  assert.equal(second.length, 105);
  assert.deepEqual([...first, ...second].map((s) => s.signature), newestFirst);
  const slots = [...first, ...second].map((s) => s.slot);
  assert.deepEqual(slots, [...slots].sort((a, b) => Number(b - a)));
  const bad = [...first, ...second].find((s) => s.signature === failed);
  assert.deepEqual(bad?.err, { InstructionError: [0n, { Custom: 1n }] });
  assert.equal(first[0]?.err, null);
  assert.equal(first[0]?.confirmationStatus, "confirmed");

  const until = newestFirst[5];
  assert.ok(until);
  const limited = await rpc.getSignaturesForAddress(recipient.address, {
    commitment: "confirmed",
    limit: 10,
    until,
  }).send();
  assert.deepEqual(limited.map((s) => s.signature), newestFirst.slice(0, 5));
  const atFinalized = await rpc.getSignaturesForAddress(recipient.address, {
    commitment: "finalized",
  }).send();
  assert.equal(atFinalized.length, 0);
  const tooMany = await rpc.getSignaturesForAddress(recipient.address, { limit: 1001 }).send()
    .then(() => null, (e) => e);
  assert.ok(isSolanaError(tooMany, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS));
});

import assert from "node:assert/strict";
import { type Signature } from "@solana/kit";
import { base58 } from "@scure/base";
import { createFundedSigner, sendSolTransfer } from "../../sandbox/chain/fixtures.ts";
import { assertErrorCode } from "../support/assertions.ts";
import { startChainReads } from "../support/chain_reads.ts";

Deno.test("GET /v1/signatures/:signature follows a transaction through every status", async (t) => {
  await using h = await startChainReads();
  const payer = await createFundedSigner(h.chain);
  const status = async (signature: Signature) => {
    const res = await h.get(`/v1/signatures/${signature}`);
    assert.equal(res.status, 200);
    return await res.json();
  };

  // Given a transfer that has just landed
  const signature = await sendSolTransfer(h.chain, { from: payer, amount: 1_000_000_000n });
  const landedAt = h.chain.clock().slot;

  await t.step("processed, then confirmed, then finalized; never cached", async () => {
    assert.deepEqual(await status(signature), {
      signature,
      status: "processed",
      slot: landedAt,
      error: null,
    });
    h.chain.advanceSlots(1);
    assert.equal((await status(signature)).status, "confirmed");
    h.chain.advanceSlots(40);
    assert.deepEqual(await status(signature), {
      signature,
      status: "finalized",
      slot: landedAt,
      error: null,
    });
  });

  await t.step("failed, with the on-chain error as JSON", async () => {
    // Given a transfer of more than the payer holds
    const failing = await sendSolTransfer(h.chain, { from: payer, amount: 1_000_000_000_000_000n });
    const slot = h.chain.clock().slot;
    const answer = await status(failing);
    assert.deepEqual(answer, {
      signature: failing,
      status: "failed",
      slot,
      error: '{"InstructionError":[0,{"Custom":1}]}',
    });
    assert.deepEqual(JSON.parse(answer.error), { InstructionError: [0, { Custom: 1 }] });
  });

  await t.step("still found once it left the recent status cache", async () => {
    h.chain.advanceSlots(500);
    assert.equal((await status(signature)).status, "finalized");
  });

  await t.step("unknown when the node has no record", async () => {
    const never = base58.encode(crypto.getRandomValues(new Uint8Array(64))) as Signature;
    assert.deepEqual(await status(never), {
      signature: never,
      status: "unknown",
      slot: null,
      error: null,
    });
  });

  await t.step("invalid_signature for anything but base58 of 64 bytes", async () => {
    for (
      const bad of [
        "123",
        base58.encode(new Uint8Array(32).fill(9)),
        base58.encode(new Uint8Array(65).fill(9)),
        "0OIl".repeat(22),
      ]
    ) {
      const res = await h.get(`/v1/signatures/${bad}`);
      const body = await assertErrorCode(res, 400, "invalid_signature");
      assert.equal(body.error.message, "Malformed signature");
    }
  });

  await t.step("internal when the node is unreachable", async () => {
    h.chain.faults.closeConnections(1);
    const res = await h.get(`/v1/signatures/${signature}`);
    const body = await assertErrorCode(res, 500, "internal");
    assert.ok(!body.error.message.includes(String(h.chain.port)));
  });
});

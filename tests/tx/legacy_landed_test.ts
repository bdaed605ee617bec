// Keys settled `failed` by versions whose proof a node could fool, although one of their attempts
// landed (issue 28): a retry must find the payment, whichever attempt made it, pay nothing more,
// and count it in the limits again.
import assert from "node:assert/strict";
import { ulid } from "../../core/ids.ts";
import { txRequestKey, type TxRequestRecord } from "../../kv/tx_requests.ts";
import { ABANDONED_ERROR, EXPIRED_ERROR } from "../../lib/tx/lifecycle/result.ts";
import { attemptRef, settleAttempt } from "../../lib/tx/record/transitions.ts";
import { balanceOf, okJson, startTxHarness, type TxHarness } from "../support/tx_harness.ts";

const ONE_SOL = 1_000_000_000n;

/**
 * Given: the key's payment landed, then an older version settled it `failed` as expired (giving
 * its usage back, as a settling commit does). Returns the key's stored record afterwards.
 */
async function paidThenSettledFailed(
  h: TxHarness,
  body: { idempotencyKey: string },
): Promise<TxRequestRecord> {
  const paid = await okJson(await h.a.post("transfer-sol", body));
  assert.equal(paid.status, "confirmed");
  await h.txEvents();
  const key = txRequestKey(h.project.id, body.idempotencyKey);
  const landed = (await h.a.kv.get<TxRequestRecord>(key)).value!;
  await h.a.kv.set(key, { ...landed, status: "submitted" });
  await settleAttempt(h.a.ctx, attemptRef(landed), { status: "failed", error: EXPIRED_ERROR });
  await h.txEvents();
  return (await h.a.kv.get<TxRequestRecord>(key)).value!;
}

Deno.test("A retry finds the payment of an earlier attempt settled failed by an older version: confirmed with that signature, nothing paid again", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5" });
  const to = await h.link(3);
  const body = { to: { userId: 3 }, amount: "1", idempotencyKey: "paid-early" };
  const settled = await paidThenSettledFailed(h, body);
  // And: a later attempt of the key died before it was signed
  const key = txRequestKey(h.project.id, body.idempotencyKey);
  await h.a.kv.set(
    key,
    {
      ...settled,
      attempt: 2,
      attemptId: ulid(h.a.clock.now()),
      signature: null,
      signed: null,
      error: ABANDONED_ERROR,
      previous: [{
        attempt: 1,
        attemptId: settled.attemptId,
        signature: settled.signature!,
        blockhash: settled.signed!.blockhash,
        lastValidBlockHeight: settled.signed!.lastValidBlockHeight,
        error: EXPIRED_ERROR,
      }],
    } satisfies TxRequestRecord,
  );

  // When: the client retries the key
  const retry = await okJson(await h.a.post("transfer-sol", body));

  // Then
  h.chain.advanceSlots(2);
  assert.equal(await balanceOf(h, to), ONE_SOL);
  assert.deepEqual([retry.status, retry.signature], ["confirmed", settled.signature]);
});

Deno.test("A failed key found paid counts in the limits again: the recipient's hourly count refuses the next payout", async () => {
  await using h = await startTxHarness();
  await h.policy({ maxSolPerTransfer: "5", perRecipientPerHour: 1 });
  const to = await h.link(4);
  const body = { to: { userId: 4 }, amount: "1", idempotencyKey: "paid-once" };
  await paidThenSettledFailed(h, body);
  // When: its retry finds it landed
  assert.equal((await okJson(await h.a.post("transfer-sol", body))).status, "confirmed");

  // Then: within the hour, the recipient may receive nothing more
  const next = await h.a.post("transfer-sol", { ...body, idempotencyKey: "another" });
  assert.equal(next.status, 429);
  assert.equal((await next.json()).error.code, "recipient_rate_limited");
  assert.equal(await balanceOf(h, to), ONE_SOL);
});

// Paging of the transaction list at the store: filters that skip many requests, the examined cap,
// and index entries left behind by a retry.
import assert from "node:assert/strict";
import { ulid } from "../../core/ids.ts";
import type { TxStatus } from "../../kv/tx_requests.ts";
import {
  listTxByTime,
  txAttemptByTimeKey,
  txRequestKey,
  type TxRequestRecord,
} from "../../kv/tx_requests.ts";

const PROJECT = "p1";

/** Stores a request as the reservation would, with its time-index entry; returns its attempt id. */
async function storeRequest(kv: Deno.Kv, key: string, status: TxStatus, at: number) {
  const attemptId = ulid(at);
  const record: TxRequestRecord = {
    projectId: PROJECT,
    key,
    kind: "transfer-sol",
    cluster: "devnet",
    body: { to: { userId: 1 }, mint: null, amount: "1" },
    attempt: 1,
    attemptId,
    status,
    recipient: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
    recipientUserId: 1,
    signature: null,
    error: status === "failed" ? "failed" : null,
    usage: {
      at,
      asset: "SOL",
      amount: 1n,
      recipient: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
      userId: 1,
    },
    signed: null,
    checkJobId: null,
    createdAt: at,
    updatedAt: at,
  };
  await kv.atomic().set(txRequestKey(PROJECT, key), record)
    .set(txAttemptByTimeKey(PROJECT, attemptId), key).commit();
  return attemptId;
}

Deno.test("listTxByTime() pages newest first through filters, the examined cap and stale index entries", async (t) => {
  using kv = await Deno.openKv(":memory:");
  // 30 requests, one a millisecond; every third failed (k2, k5, ... k29).
  const ids: string[] = [];
  for (let i = 0; i < 30; i++) {
    ids.push(await storeRequest(kv, `k${i}`, i % 3 === 2 ? "failed" : "confirmed", 1_000 + i));
  }
  const keys = (page: { records: TxRequestRecord[] }) => page.records.map((r) => r.key);

  await t.step(
    "a full page stops at its last request; the last page answers next null",
    async () => {
      const first = await listTxByTime(kv, PROJECT, { limit: 12 });
      assert.deepEqual(keys(first), Array.from({ length: 12 }, (_, i) => `k${29 - i}`));
      assert.equal(first.next, ids[18]);
      const rest = await listTxByTime(kv, PROJECT, { limit: 100, after: first.next! });
      assert.deepEqual([rest.records.length, rest.next], [18, null]);
    },
  );

  await t.step(
    "a filter skips the others, and the cap ends a page early with a cursor",
    async () => {
      const failed = await listTxByTime(kv, PROJECT, { limit: 3, status: "failed" });
      assert.deepEqual([keys(failed), failed.next], [["k29", "k26", "k23"], ids[23]]);
      const capped = await listTxByTime(kv, PROJECT, {
        limit: 10,
        status: "failed",
        maxExamined: 4,
      });
      assert.deepEqual([keys(capped), capped.next], [["k29", "k26"], ids[26]]);
      const after = await listTxByTime(kv, PROJECT, {
        limit: 10,
        status: "failed",
        after: capped.next!,
      });
      assert.deepEqual(keys(after), ["k23", "k20", "k17", "k14", "k11", "k8", "k5", "k2"]);
      assert.equal(after.next, null);
    },
  );

  await t.step(
    "a key retried since (its record has a newer attempt) is listed once, at the top",
    async () => {
      const retried = await storeRequest(kv, "k3", "pending", 2_000);
      const page = await listTxByTime(kv, PROJECT, { limit: 100 });
      assert.equal(page.records.filter((r) => r.key === "k3").length, 1);
      assert.deepEqual([page.records[0]?.key, page.records[0]?.attemptId], ["k3", retried]);
      assert.equal(page.records.length, 30);
    },
  );
});

// Paging of the transaction list: filters served from the status index, the examined cap, and
// index entries left behind by a retry.
import assert from "node:assert/strict";
import { ulid } from "../../core/ids.ts";
import type { TxStatus } from "../../kv/tx_requests.ts";
import {
  addTxStatusMove,
  listTxRequests,
  txAttemptByTimeKey,
  txRequestKey,
  type TxRequestRecord,
} from "../../kv/tx_requests.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";

const PROJECT = "p1";
const NOW = 1_000_000;

/** A request of `project` with `status`, reserved at `at`. */
function requestRecord(
  project: string,
  key: string,
  status: TxStatus,
  at: number,
): TxRequestRecord {
  const attemptId = ulid(at);
  return {
    projectId: project,
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
    signBy: at + 20_000,
    checkJobId: null,
    previous: [],
    createdAt: at,
    updatedAt: at,
  };
}

/** Appends to `op` a request as the reservation and its status changes store it: record and both indexes. */
function addStoredRequest(op: Deno.AtomicOperation, record: TxRequestRecord): void {
  op.set(txRequestKey(record.projectId, record.key), record)
    .set(txAttemptByTimeKey(record.projectId, record.attemptId), record.key);
  addTxStatusMove(op, null, record);
}

/** Stores a request of `PROJECT`; returns its attempt id. */
async function storeRequest(kv: Deno.Kv, key: string, status: TxStatus, at: number) {
  const record = requestRecord(PROJECT, key, status, at);
  const op = kv.atomic();
  addStoredRequest(op, record);
  await op.commit();
  return record.attemptId;
}

Deno.test("listTxRequests() pages newest first through filters, the examined cap and stale index entries", async (t) => {
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
      const first = await listTxRequests(kv, PROJECT, { now: NOW, limit: 12 });
      assert.deepEqual(keys(first), Array.from({ length: 12 }, (_, i) => `k${29 - i}`));
      assert.equal(first.next, ids[18]);
      const rest = await listTxRequests(kv, PROJECT, { now: NOW, limit: 100, after: first.next! });
      assert.deepEqual([rest.records.length, rest.next], [18, null]);
    },
  );

  await t.step(
    "a filter reads only its status's index, and the cap ends a page early with a cursor",
    async () => {
      const failed = await listTxRequests(kv, PROJECT, { now: NOW, limit: 3, status: "failed" });
      assert.deepEqual([keys(failed), failed.next], [["k29", "k26", "k23"], ids[23]]);
      const capped = await listTxRequests(kv, PROJECT, {
        now: NOW,
        limit: 10,
        status: "failed",
        maxExamined: 2,
      });
      assert.deepEqual([keys(capped), capped.next], [["k29", "k26"], ids[26]]);
      const after = await listTxRequests(kv, PROJECT, {
        now: NOW,
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
      const page = await listTxRequests(kv, PROJECT, { now: NOW, limit: 100 });
      assert.equal(page.records.filter((r) => r.key === "k3").length, 1);
      assert.deepEqual([page.records[0]?.key, page.records[0]?.attemptId], ["k3", retried]);
      assert.equal(page.records.length, 30);
    },
  );
});

Deno.test("GET /v1/tx?status= finds requests behind thousands of others in one answer", async () => {
  await using app = await createTestApp();
  const { project, apiKey } = await createTestProject(app);
  // Given: one submitted request, then 2,000 newer confirmed ones (100 a commit).
  const base = app.clock.now() - 3_600_000;
  const oldest = requestRecord(project.id, "waiting", "submitted", base);
  for (let first = 0; first < 2_000; first += 100) {
    const op = app.kv.atomic();
    if (first === 0) addStoredRequest(op, oldest);
    for (let i = first; i < first + 100; i++) {
      addStoredRequest(op, requestRecord(project.id, `paid-${i}`, "confirmed", base + 1 + i));
    }
    assert.ok((await op.commit()).ok);
  }

  // When
  const res = await call(app.app, "/v1/tx?status=submitted", { apiKey });

  // Then: the first answer has it, and says nothing is left.
  const page = await res.json();
  assert.deepEqual(page.transactions.map((t: { idempotencyKey: string }) => t.idempotencyKey), [
    "waiting",
  ]);
  assert.equal(page.next, null);
});

/**
 * Store migration: requests stored before the status index existed (`["tx_by_status", ...]`,
 * `tx_requests.ts`) get their entry, so `GET /v1/tx?status=` lists them. Each entry is added in a
 * commit checked against the record and the entry's absence, so instances running it together add
 * each entry once, and a status change made meanwhile (which moves the entry itself) wins. A marker
 * records that the store was gone through, so later starts skip the scan.
 */
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { txByStatusKey, type TxRequestRecord } from "../../kv/tx_requests.ts";

const DONE_KEY: Deno.KvKey = ["store_migrations", "tx_status_index"];

/** Indexes by status every stored request not indexed yet (once per store); returns how many it added. */
export async function backfillTxStatusIndex(kv: Deno.Kv, now: number): Promise<number> {
  if ((await kv.get(DONE_KEY)).versionstamp) return 0;
  let added = 0;
  for await (const { key } of kv.list<TxRequestRecord>({ prefix: ["tx_requests"] })) {
    if (await indexOne(kv, key)) added++;
  }
  await kv.set(DONE_KEY, { doneAt: now });
  return added;
}

// Adds the entry of the request stored at `key` unless it has one; true when it added it.
async function indexOne(kv: Deno.Kv, key: Deno.KvKey): Promise<boolean> {
  return await commitWithRetry("index a transaction request by status", async () => {
    const entry = await kv.get<TxRequestRecord>(key);
    const record = entry.value;
    if (!record) return false;
    const indexKey = txByStatusKey(record.projectId, record.status, record.attemptId);
    const index = await kv.get(indexKey);
    if (index.versionstamp) return false;
    const result = await kv.atomic().check(entry, index).set(indexKey, record.key).commit();
    return result.ok ? true : RETRY;
  });
}

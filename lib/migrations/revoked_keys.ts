/**
 * Store migration: keys revoked by earlier versions kept their hash entry and their record for
 * good. Each such record gets the expiry a revocation gets today, 30 days from its `revokedAt`
 * (deleted at once when that is past), and loses its hash entry, in one commit checked against
 * the record, so instances running it together change each once. A marker records that the store
 * was gone through, so later starts skip the scan.
 */
import { apiKeyHashKey, type ApiKeyRecord, REVOKED_KEY_KEPT_MS } from "../../kv/api_keys.ts";

const DONE_KEY: Deno.KvKey = ["store_migrations", "revoked_key_expiry"];

/** Gives every revoked key of an older version its expiry (once per store); returns how many it changed. */
export async function expireOldRevokedKeys(kv: Deno.Kv, now: number): Promise<number> {
  if ((await kv.get(DONE_KEY)).versionstamp) return 0;
  let changed = 0;
  for await (const entry of kv.list<ApiKeyRecord>({ prefix: ["api_keys"] })) {
    const record = entry.value;
    if (record.revokedAt === null) continue;
    const left = record.revokedAt + REVOKED_KEY_KEPT_MS - now;
    const op = kv.atomic().check(entry).delete(apiKeyHashKey(record.hash));
    if (left > 0) op.set(entry.key, record, { expireIn: left });
    else op.delete(entry.key);
    if ((await op.commit()).ok) changed++;
  }
  await kv.set(DONE_KEY, { doneAt: now });
  return changed;
}

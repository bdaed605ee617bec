/**
 * Keys revoked by earlier versions kept their hash entry and their record for good. Each such
 * record gets the expiry a revocation gets today, 30 days from its `revokedAt` (deleted at once
 * when that is past), and loses its hash entry, in one commit checked against the record and the
 * entry, so instances running this together change each once. A key revoked the current way has
 * no hash entry left and is passed over.
 */
import { apiKeyHashKey, type ApiKeyRecord, REVOKED_KEY_KEPT_MS } from "../../kv/api_keys.ts";
import type { MigrationStep } from "./step.ts";

/** Gives every revoked key of an earlier version its expiry. */
export const expireOldRevokedKeys: MigrationStep = async ({ kv, clock }) => {
  let changed = 0;
  for await (const entry of kv.list<ApiKeyRecord>({ prefix: ["api_keys"] })) {
    const record = entry.value;
    if (record.revokedAt === null) continue;
    const hash = await kv.get(apiKeyHashKey(record.hash));
    if (!hash.versionstamp) continue;
    const left = record.revokedAt + REVOKED_KEY_KEPT_MS - clock.now();
    const op = kv.atomic().check(entry, hash).delete(hash.key);
    if (left > 0) op.set(entry.key, record, { expireIn: left });
    else op.delete(entry.key);
    if ((await op.commit()).ok) changed++;
  }
  return { changed, complete: true };
};

/**
 * The store's format version: which of the store migrations (`lib/migrations/`) it has been through.
 * Absent on a store no version of the service has migrated yet (a new one, or one written before
 * the version was kept).
 */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";

/** The version record. */
export interface StoreVersion {
  version: number;
  updatedAt: number;
}

const STORE_VERSION_KEY: Deno.KvKey = ["store_version"];

/** The store's version record; null before its first migration. */
export async function getStoreVersionEntry(kv: Deno.Kv): Promise<StoreVersion | null> {
  return (await kv.get<StoreVersion>(STORE_VERSION_KEY)).value;
}

/** The store's version; 0 before its first migration. */
export async function getStoreVersion(kv: Deno.Kv): Promise<number> {
  return (await getStoreVersionEntry(kv))?.version ?? 0;
}

/**
 * Raises the store's version to `version` (never lowers it: an instance of an older version
 * starting meanwhile cannot undo a newer one's migration); returns the version it stands at.
 */
export async function raiseStoreVersion(
  kv: Deno.Kv,
  version: number,
  now: number,
): Promise<number> {
  return await commitWithRetry("raise the store version", async () => {
    const entry = await kv.get<StoreVersion>(STORE_VERSION_KEY);
    if ((entry.value?.version ?? 0) >= version) return entry.value!.version;
    const ok = (await kv.atomic().check(entry).set(STORE_VERSION_KEY, { version, updatedAt: now })
      .commit()).ok;
    return ok ? version : RETRY;
  });
}

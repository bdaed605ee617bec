/**
 * The store's format: which store migrations (`lib/migrations/`) it has been through, one record
 * per migration by name (`["migrations_applied", name]`). Releases before names kept one number
 * instead (`["store_version"]`), which releases numbered differently gave different meanings;
 * `lib/migrations/` reads it only for what it proves, and leaves it as they wrote it.
 */

/** The numbered version record of releases before names. */
export interface StoreVersion {
  version: number;
  updatedAt: number;
}

/** A migration's record: when it was applied (for one a numbered version proves: when the store reached it). */
export interface AppliedMigration {
  appliedAt: number;
}

const STORE_VERSION_KEY: Deno.KvKey = ["store_version"];

function appliedMigrationKey(name: string): Deno.KvKey {
  return ["migrations_applied", name];
}

/** The store's numbered version record; null on a store no numbering release migrated. */
export async function getStoreVersionEntry(kv: Deno.Kv): Promise<StoreVersion | null> {
  return (await kv.get<StoreVersion>(STORE_VERSION_KEY)).value;
}

/** The migrations applied to the store: when each was, by name. */
export async function listAppliedMigrations(kv: Deno.Kv): Promise<Map<string, number>> {
  const applied = new Map<string, number>();
  for await (const e of kv.list<AppliedMigration>({ prefix: ["migrations_applied"] })) {
    applied.set(e.key[1] as string, e.value.appliedAt);
  }
  return applied;
}

/**
 * Records the migration `name` as applied at `at`, unless it is already (the first record stands,
 * so instances recording it together keep one time); returns the time recorded.
 */
export async function recordAppliedMigration(
  kv: Deno.Kv,
  name: string,
  at: number,
): Promise<number> {
  const key = appliedMigrationKey(name);
  const record: AppliedMigration = { appliedAt: at };
  const { ok } = await kv.atomic().check({ key, versionstamp: null }).set(key, record).commit();
  if (ok) return at;
  return (await kv.get<AppliedMigration>(key)).value!.appliedAt;
}

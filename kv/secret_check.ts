/** The key-check value of SECRET: written on the first start, compared on every later one. */

/** What the store remembers of the SECRET it runs under (never the SECRET itself). */
export interface SecretCheckRecord {
  /** Public id of the SECRET, as written into every sealed value. */
  keyId: string;
  /** HKDF-derived check value of the SECRET. */
  check: string;
  /** True once every stored secret is sealed (format v2) under this SECRET. */
  resealed: boolean;
  updatedAt: number;
}

/** Key of the one key-check record. */
export const SECRET_CHECK_KEY: Deno.KvKey = ["secret_check"];

/** Returns the key-check entry (versionstamp null before the first start). */
export function getSecretCheckEntry(kv: Deno.Kv): Promise<Deno.KvEntryMaybe<SecretCheckRecord>> {
  return kv.get<SecretCheckRecord>(SECRET_CHECK_KEY);
}

/** Writes the record if the entry is still `expected`; false when another instance changed it first. */
export async function setSecretCheck(
  kv: Deno.Kv,
  expected: Deno.KvEntryMaybe<SecretCheckRecord>,
  record: SecretCheckRecord,
): Promise<boolean> {
  const result = await kv.atomic().check(expected).set(SECRET_CHECK_KEY, record).commit();
  return result.ok;
}

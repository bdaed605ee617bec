/**
 * The key-check record of SECRET: written on the first start, compared on every later one, and
 * the gate of every commit that stores a sealed value.
 *
 * During a rotation (`previous` set) instances still running the old SECRET keep sealing new
 * values under it; each such commit adds one to `staleWrites`. The start that closes the rotation
 * counts the values left under the old SECRET, then clears `previous` in a commit checked against
 * the record it read before counting: a value sealed under the old SECRET meanwhile changed the
 * record, so that commit fails and the count is made again. Once `previous` is cleared, no commit
 * can store a value under the old SECRET (`guardSealedWrite`), so none can be stranded.
 */

/** The SECRET a record names (never the SECRET itself). */
interface SecretRef {
  /** Public id of the SECRET, as written into every sealed value. */
  keyId: string;
  /** HKDF-derived check value of the SECRET. */
  check: string;
}

/** What the store remembers of the SECRET it runs under. */
export interface SecretCheckRecord extends SecretRef {
  /**
   * The SECRET being rotated away while values sealed under it may remain: set by the first
   * start with it as SECRET_PREVIOUS, cleared by a start without SECRET_PREVIOUS that finds none.
   */
  previous: SecretRef | null;
  /** Values sealed under `previous` since it was set. */
  staleWrites: number;
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

/** Thrown when the store no longer accepts values sealed under this instance's SECRET. */
export class RetiredSecretError extends Error {
  constructor(keyId: string) {
    super(
      `Cannot store a secret sealed under key id ${keyId}: the store's SECRET was rotated and ` +
        "this instance still runs with the old one; restart it with the current SECRET",
    );
    this.name = "RetiredSecretError";
  }
}

/**
 * Adds to `op`, a commit storing a value sealed under `keyId`, the check of the key-check record:
 * the record must still accept `keyId` (its SECRET, or the previous one while the rotation is
 * open, then counted in `staleWrites`). Call it in each round of the commit's retry loop; throws
 * `RetiredSecretError` when `keyId` is accepted no more.
 */
export async function guardSealedWrite(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  keyId: string,
): Promise<void> {
  const entry = await getSecretCheckEntry(kv);
  op.check(entry);
  const record = entry.value;
  // No record yet: the first start writes it (and a commit racing that start is retried).
  if (!record || record.keyId === keyId) return;
  if (record.previous?.keyId !== keyId) throw new RetiredSecretError(keyId);
  op.set(SECRET_CHECK_KEY, { ...record, staleWrites: record.staleWrites + 1 });
}

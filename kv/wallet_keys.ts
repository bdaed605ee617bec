/** Managed wallet keys: one per project, the secret stored only encrypted (AES-256-GCM). */

/** A managed wallet key as stored. */
interface WalletKeyRecord {
  address: string;
  /** The 32-byte ed25519 seed, sealed by `encryptSecret` with the project bound as associated data. */
  secretKeyEnc: string;
  createdAt: number;
}

/** Key of a project's managed wallet key. */
function walletKeyKey(projectId: string): Deno.KvKey {
  return ["wallet_keys", projectId];
}

/** Stores the project's wallet key unless one exists; returns the stored record either way. */
export async function createWalletKey(
  kv: Deno.Kv,
  projectId: string,
  record: WalletKeyRecord,
): Promise<{ record: WalletKeyRecord; created: boolean }> {
  const key = walletKeyKey(projectId);
  const result = await kv.atomic().check({ key, versionstamp: null }).set(key, record).commit();
  if (result.ok) return { record, created: true };
  // The commit may have applied with its answer lost (`lost_answer.ts`): then the key is ours.
  const existing = await getWalletKey(kv, projectId);
  if (!existing) throw new Error("Cannot create wallet key: concurrent change");
  if (existing.address === record.address) return { record, created: true };
  return { record: existing, created: false };
}

/** Returns the project's wallet key record, or null. */
export async function getWalletKey(
  kv: Deno.Kv,
  projectId: string,
): Promise<WalletKeyRecord | null> {
  return (await kv.get<WalletKeyRecord>(walletKeyKey(projectId))).value;
}

/** Lists every project's wallet key entry (start-up re-encryption walks them). */
export async function* listWalletKeyEntries(
  kv: Deno.Kv,
): AsyncGenerator<Deno.KvEntry<WalletKeyRecord>> {
  yield* kv.list<WalletKeyRecord>({ prefix: ["wallet_keys"] });
}

/** Replaces the sealed seed if the entry did not change meanwhile; false when it did. */
export async function updateWalletKeySealed(
  kv: Deno.Kv,
  entry: Deno.KvEntry<WalletKeyRecord>,
  secretKeyEnc: string,
): Promise<boolean> {
  const result = await kv.atomic().check(entry).set(entry.key, { ...entry.value, secretKeyEnc })
    .commit();
  return result.ok;
}

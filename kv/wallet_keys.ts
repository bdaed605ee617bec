/** Managed wallet keys: one per project, the secret stored only encrypted (AES-256-GCM). */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";
import { guardSealedWrite } from "./secret_check.ts";

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

/**
 * Stores the project's wallet key, sealed under the SECRET of key id `sealedUnder`, unless one
 * exists; returns the stored record either way. Throws `RetiredSecretError` when the store no
 * longer accepts that SECRET (`secret_check.ts`).
 */
export async function createWalletKey(
  kv: Deno.Kv,
  projectId: string,
  record: WalletKeyRecord,
  options: { sealedUnder: string },
): Promise<{ record: WalletKeyRecord; created: boolean }> {
  const key = walletKeyKey(projectId);
  return await commitWithRetry("create wallet key", async () => {
    const op = kv.atomic().check({ key, versionstamp: null }).set(key, record);
    await guardSealedWrite(kv, op, options.sealedUnder);
    if ((await op.commit()).ok) return { record, created: true };
    // The commit may have applied with its answer lost (`lost_answer.ts`): then the key is ours.
    const existing = await getWalletKey(kv, projectId);
    // Not stored: the key-check record changed meanwhile (a rotation); look at it again.
    if (!existing) return RETRY;
    if (existing.address === record.address) return { record, created: true };
    return { record: existing, created: false };
  }, { rounds: 10 });
}

/** Returns the project's wallet key record, or null. */
export async function getWalletKey(
  kv: Deno.Kv,
  projectId: string,
): Promise<WalletKeyRecord | null> {
  return (await getWalletKeyEntry(kv, projectId)).value;
}

/** Returns the project's wallet key entry (versionstamp null when it has none). */
export function getWalletKeyEntry(
  kv: Deno.Kv,
  projectId: string,
): Promise<Deno.KvEntryMaybe<WalletKeyRecord>> {
  return kv.get<WalletKeyRecord>(walletKeyKey(projectId));
}

/** Lists every project's wallet key entry (re-encryption after a rotation walks them). */
export async function* listWalletKeyEntries(
  kv: Deno.Kv,
): AsyncGenerator<Deno.KvEntry<WalletKeyRecord>> {
  yield* kv.list<WalletKeyRecord>({ prefix: ["wallet_keys"] });
}

/**
 * Replaces the sealed seed with `secretKeyEnc` (sealed under key id `sealedUnder`) if neither the
 * entry nor the key-check record changed meanwhile; false when one did.
 */
export async function updateWalletKeySealed(
  kv: Deno.Kv,
  entry: Deno.KvEntry<WalletKeyRecord>,
  sealed: { secretKeyEnc: string; sealedUnder: string },
): Promise<boolean> {
  const op = kv.atomic().check(entry).set(entry.key, {
    ...entry.value,
    secretKeyEnc: sealed.secretKeyEnc,
  });
  await guardSealedWrite(kv, op, sealed.sealedUnder);
  return (await op.commit()).ok;
}

/** Player linking challenges: single-use nonces bound to a project, a player, a wallet and a message. */

/** A pending linking challenge as stored. */
interface LinkNonce {
  nonce: string;
  projectId: string;
  userId: number;
  address: string;
  /** The exact text the wallet must sign. */
  message: string;
  expiresAt: number;
}

/** Key of a pending challenge. */
function linkNonceKey(nonce: string): Deno.KvKey {
  return ["link_nonces", nonce];
}

/** Stores a new challenge; `expireIn` only lets KV drop it later, `expiresAt` is what counts. */
export async function createLinkNonce(kv: Deno.Kv, record: LinkNonce, now: number): Promise<void> {
  const key = linkNonceKey(record.nonce);
  const result = await kv.atomic()
    .check({ key, versionstamp: null })
    .set(key, record, { expireIn: Math.max(1, record.expiresAt - now) })
    .commit();
  if (!result.ok) throw new Error("Cannot create challenge: nonce already exists");
}

/** Deletes the challenge and returns it, or null when it is unknown or another request consumed it first. */
export async function consumeLinkNonce(kv: Deno.Kv, nonce: string): Promise<LinkNonce | null> {
  // Ours are 32 characters; anything long cannot exist and must not reach KV's key size limit.
  if (nonce.length === 0 || nonce.length > 128) return null;
  const entry = await kv.get<LinkNonce>(linkNonceKey(nonce));
  if (!entry.value) return null;
  // The versionstamp check makes the delete the single point where exactly one verify wins.
  const result = await kv.atomic().check(entry).delete(entry.key).commit();
  return result.ok ? entry.value : null;
}

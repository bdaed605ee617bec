/**
 * Keys derived from the root `SECRET`: one for encryption at rest, one for signing cookies, and
 * a key id plus key-check value that name the SECRET without revealing it.
 *
 * During a rotation (`SECRET_PREVIOUS`) the previous SECRET's keys are kept beside the current
 * ones: they only decrypt and verify what was made before the rotation, never make anything new.
 * Before one, `SECRET_NEXT` announces the SECRET to come the same way: its keys only open what
 * instances already rotated to it made, so an instance not rotated yet keeps working beside them.
 */

/** The keys of one SECRET; never exported or logged (the id and check value may be). */
export interface SecretKeySet {
  /** Short public id of the SECRET, written into every ciphertext. */
  id: string;
  /** Key-check value kept in KV: proves a later start runs with the same SECRET. */
  check: string;
  aes: CryptoKey;
  hmac: CryptoKey;
}

/** The current SECRET's keys, the previous SECRET's during a rotation, the next one's before it. */
export interface SecretKeys {
  current: SecretKeySet;
  previous: SecretKeySet | null;
  next: SecretKeySet | null;
}

const encoder = new TextEncoder();
const KEY_ID_LENGTH = 12;

/** Derives the keys of `secret` (and of `previous` when rotating, of `next` before it). */
export async function deriveSecretKeys(
  secret: string,
  options: { previous?: string | undefined; next?: string | undefined } = {},
): Promise<SecretKeys> {
  return {
    current: await deriveKeySet(secret),
    previous: options.previous ? await deriveKeySet(options.previous) : null,
    next: options.next ? await deriveKeySet(options.next) : null,
  };
}

/** Every key set that may open a value or verify a signature, the current one first. */
export function openingKeySets(keys: SecretKeys): SecretKeySet[] {
  return [keys.current, keys.previous, keys.next].filter((set) => set !== null);
}

/** The key set that sealed something with key id `id`, or null when no SECRET of ours did. */
export function keySetById(keys: SecretKeys, id: string): SecretKeySet | null {
  return openingKeySets(keys).find((set) => set.id === id) ?? null;
}

// HKDF with a separate label per use, so one leaked key cannot forge another.
async function deriveKeySet(secret: string): Promise<SecretKeySet> {
  const root = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, [
    "deriveKey",
    "deriveBits",
  ]);
  const hkdf = (info: string) => ({
    name: "HKDF",
    hash: "SHA-256",
    salt: encoder.encode("blocklink"),
    info: encoder.encode(info),
  });
  const aes = await crypto.subtle.deriveKey(
    hkdf("encryption-at-rest"),
    root,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
  const hmac = await crypto.subtle.deriveKey(
    hkdf("cookie-signing"),
    root,
    { name: "HMAC", hash: "SHA-256", length: 256 },
    false,
    ["sign", "verify"],
  );
  const checkBits = await crypto.subtle.deriveBits(hkdf("key-check"), root, 256);
  const check = Array.from(new Uint8Array(checkBits), (b) => b.toString(16).padStart(2, "0"))
    .join("");
  return { id: check.slice(0, KEY_ID_LENGTH), check, aes, hmac };
}

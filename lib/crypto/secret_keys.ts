/**
 * Keys derived from the root `SECRET`: one for encryption at rest, one for signing cookies, and
 * a key id plus key-check value that name the SECRET without revealing it.
 *
 * During a rotation (`SECRET_PREVIOUS`) the previous SECRET's keys are kept beside the current
 * ones: they only decrypt and verify what was made before the rotation, never make anything new.
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

/** The current SECRET's keys, and the previous SECRET's while a rotation is configured. */
export interface SecretKeys {
  current: SecretKeySet;
  previous: SecretKeySet | null;
}

const encoder = new TextEncoder();
const KEY_ID_LENGTH = 12;

/** Derives the keys of `secret` (and of `previous`, when rotating). */
export async function deriveSecretKeys(
  secret: string,
  options: { previous?: string | undefined } = {},
): Promise<SecretKeys> {
  return {
    current: await deriveKeySet(secret),
    previous: options.previous ? await deriveKeySet(options.previous) : null,
  };
}

/** The key set that sealed something with key id `id`, or null when neither SECRET did. */
export function keySetById(keys: SecretKeys, id: string): SecretKeySet | null {
  if (keys.current.id === id) return keys.current;
  if (keys.previous?.id === id) return keys.previous;
  return null;
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

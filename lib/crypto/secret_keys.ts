/** Keys derived from the root `SECRET`: one for encryption at rest, one for signing cookies. */

/** The derived keys; never exported or logged. */
export interface SecretKeys {
  aes: CryptoKey;
  hmac: CryptoKey;
}

const encoder = new TextEncoder();

/** Derives separate AES-256-GCM and HMAC-SHA256 keys from `secret` with HKDF, so one leak cannot forge the other. */
export async function deriveSecretKeys(secret: string): Promise<SecretKeys> {
  const root = await crypto.subtle.importKey("raw", encoder.encode(secret), "HKDF", false, [
    "deriveKey",
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
  return { aes, hmac };
}

/** AES-256-GCM encryption at rest for secrets (OAuth client secrets, publishing keys, wallet keys). */
import { decodeBase64Url, encodeBase64Url } from "../ids.ts";
import type { SecretKeys } from "./secret_keys.ts";

const encoder = new TextEncoder();

/** Encrypts `plaintext` with a fresh 96-bit nonce; `context` (e.g. the project id) is bound as associated data. */
export async function encryptSecret(
  keys: SecretKeys,
  plaintext: Uint8Array | string,
  context: string,
): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = typeof plaintext === "string" ? encoder.encode(plaintext) : plaintext;
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(context) },
    keys.aes,
    data as Uint8Array<ArrayBuffer>,
  );
  return `v1.${encodeBase64Url(iv)}.${encodeBase64Url(new Uint8Array(sealed))}`;
}

/** Decrypts what `encryptSecret` produced for the same `context`; throws if it was tampered with. */
export async function decryptSecret(
  keys: SecretKeys,
  sealed: string,
  context: string,
): Promise<Uint8Array> {
  const [version, iv, body] = sealed.split(".");
  if (version !== "v1" || !iv || !body) throw new Error("Cannot decrypt secret: unknown format");
  const plain = await crypto.subtle.decrypt(
    {
      name: "AES-GCM",
      iv: decodeBase64Url(iv) as Uint8Array<ArrayBuffer>,
      additionalData: encoder.encode(context),
    },
    keys.aes,
    decodeBase64Url(body) as Uint8Array<ArrayBuffer>,
  );
  return new Uint8Array(plain);
}

/** Decrypts a secret that was stored as text. */
export async function decryptSecretText(
  keys: SecretKeys,
  sealed: string,
  context: string,
): Promise<string> {
  return new TextDecoder().decode(await decryptSecret(keys, sealed, context));
}

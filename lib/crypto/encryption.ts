/**
 * AES-256-GCM encryption at rest for secrets (wallet keys, OAuth client secrets, publishing keys,
 * webhook signing secrets, dashboard flashes, a connected game's Roblox tokens).
 *
 * A sealed value reads `v2.<key id>.<purpose>.<iv>.<ciphertext>`. The key id names the SECRET
 * that sealed it (so a rotation knows what to re-encrypt and which key opens it), the purpose
 * says what it is; both are bound into the associated data together with the context (the
 * project id, ...), so a sealed wallet key cannot be passed off as a publishing key, nor one
 * project's secret as another's. (Values stored in the format before key ids are sealed again in
 * this one by the store migration, `lib/migrations/sealed_v1.ts`.)
 */
import { decodeBase64Url, encodeBase64Url } from "../../core/ids.ts";
import { keySetById, type SecretKeys, type SecretKeySet } from "./secret_keys.ts";

const SECRET_PURPOSES = [
  "wallet_key",
  "oauth_client_secret",
  "publishing_key",
  "webhook_secret",
  "dashboard_flash",
  "roblox_app_secret",
  "roblox_access_token",
  "roblox_refresh_token",
] as const;

/** What a sealed secret is; a value sealed for one purpose never opens as another. */
export type SecretPurpose = (typeof SECRET_PURPOSES)[number];

/** What a sealed value is bound to: its purpose and its owner (project id, developer...). */
export interface SealBinding {
  purpose: SecretPurpose;
  context: string;
}

const encoder = new TextEncoder();
const PURPOSES = new Set<string>(SECRET_PURPOSES);

/** Encrypts `plaintext` under the current SECRET with a fresh 96-bit nonce, bound to `binding`. */
export async function encryptSecret(
  keys: SecretKeys,
  plaintext: Uint8Array | string,
  binding: SealBinding,
): Promise<string> {
  const { id, aes } = keys.current;
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const data = typeof plaintext === "string" ? encoder.encode(plaintext) : plaintext;
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: encoder.encode(v2Aad(id, binding)) },
    aes,
    data as Uint8Array<ArrayBuffer>,
  );
  const body = encodeBase64Url(new Uint8Array(sealed));
  return `v2.${id}.${binding.purpose}.${encodeBase64Url(iv)}.${body}`;
}

/** Decrypts what `encryptSecret` sealed for the same binding; throws if it was not, or was tampered with. */
export async function decryptSecret(
  keys: SecretKeys,
  sealed: string,
  binding: SealBinding,
): Promise<Uint8Array> {
  const parts = sealed.split(".");
  // The defaults never apply: the length is checked before the fields are used.
  const [version, id = "", purpose = "", iv = "", body = ""] = parts;
  if (version !== "v2" || parts.length !== 5 || !PURPOSES.has(purpose)) {
    throw new Error("Cannot decrypt secret: unknown format");
  }
  if (purpose !== binding.purpose) {
    throw new Error(`Cannot decrypt secret: sealed as ${purpose}, not ${binding.purpose}`);
  }
  const keySet = keySetById(keys, id);
  if (!keySet) throw new Error("Cannot decrypt secret: sealed under another SECRET");
  return await open(keySet, iv, body, v2Aad(id, binding));
}

/** Decrypts a secret that was stored as text. */
export async function decryptSecretText(
  keys: SecretKeys,
  sealed: string,
  binding: SealBinding,
): Promise<string> {
  return new TextDecoder().decode(await decryptSecret(keys, sealed, binding));
}

/** The key id of the SECRET that sealed `sealed` (for a value of another format, that format's name). */
export function sealedKeyId(sealed: string): string {
  const [version, id = ""] = sealed.split(".");
  return version === "v2" ? id : version ?? "";
}

function v2Aad(keyId: string, binding: SealBinding): string {
  return `v2.${keyId}.${binding.purpose}.${binding.context}`;
}

async function open(
  keySet: SecretKeySet,
  iv: string,
  body: string,
  aad: string,
): Promise<Uint8Array> {
  const plain = await crypto.subtle.decrypt(
    {
      name: "AES-GCM",
      iv: decodeBase64Url(iv) as Uint8Array<ArrayBuffer>,
      additionalData: encoder.encode(aad),
    },
    keySet.aes,
    decodeBase64Url(body) as Uint8Array<ArrayBuffer>,
  );
  return new Uint8Array(plain);
}

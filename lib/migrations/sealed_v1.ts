/**
 * Secrets sealed before key ids existed read `v1.<iv>.<ciphertext>`, bound only to their owner
 * (wallet keys also to their purpose). Each such stored value is opened with
 * SECRET or SECRET_PREVIOUS and sealed again in the current format under the same SECRET (moving
 * it to the new SECRET is the rotation's part, `lib/crypto/reseal.ts`), in a commit checked on
 * the value and on the key-check record. A value neither opens is left as it is, logged, and the
 * step stays incomplete: an instance with its SECRET finishes it (and the key check refuses a
 * SECRET that opens nothing of the store meanwhile).
 */
import { decodeBase64Url } from "../../core/ids.ts";
import { encryptSecret, type SealBinding } from "../crypto/encryption.ts";
import { listStoredSecrets, rewriteStoredSecret } from "../crypto/reseal.ts";
import type { SecretKeySet } from "../crypto/secret_keys.ts";
import type { MigrationStep } from "./step.ts";

const encoder = new TextEncoder();

// The associated data v1 bound: wallet keys carried their purpose, the others only the project.
function v1Context(binding: SealBinding): string {
  if (binding.purpose === "wallet_key") return `wallet_key:${binding.context}`;
  return binding.context;
}

// The plaintext of a v1 value, when `keySet` sealed it.
async function openV1(
  keySet: SecretKeySet,
  sealed: string,
  binding: SealBinding,
): Promise<Uint8Array | null> {
  const [, iv = "", body = ""] = sealed.split(".");
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt(
        {
          name: "AES-GCM",
          iv: decodeBase64Url(iv) as Uint8Array<ArrayBuffer>,
          additionalData: encoder.encode(v1Context(binding)),
        },
        keySet.aes,
        decodeBase64Url(body) as Uint8Array<ArrayBuffer>,
      ),
    );
  } catch {
    return null;
  }
}

function isV1(sealed: string): boolean {
  const parts = sealed.split(".");
  return parts[0] === "v1" && parts.length === 3;
}

/** Seals every stored v1 value again in the current format, under the SECRET that opens it. */
export const sealV1Values: MigrationStep = async ({ kv, keys }) => {
  let changed = 0;
  let unreadable = 0;
  for await (const found of listStoredSecrets(kv)) {
    if (!isV1(found.sealed)) continue;
    const binding = { purpose: found.purpose, context: found.projectId };
    const outcome = await rewriteStoredSecret(kv, found, async (sealed) => {
      if (!isV1(sealed)) return "keep";
      for (const keySet of [keys.current, keys.previous]) {
        if (!keySet) continue;
        const plain = await openV1(keySet, sealed, binding);
        if (!plain) continue;
        const next = await encryptSecret(
          { current: keySet, previous: null, next: null },
          plain,
          binding,
        );
        return { next, keyId: keySet.id };
      }
      return null;
    });
    if (outcome === "resealed") changed++;
    else if (outcome === "unreadable") unreadable++;
  }
  return { changed, complete: unreadable === 0 };
};

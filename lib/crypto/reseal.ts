/**
 * Re-encrypts every stored secret that is not sealed (format v2) under the current SECRET: the
 * values of a SECRET being rotated away (`SECRET_PREVIOUS`) and values sealed in the old v1
 * format. Runs at start-up, before the instance serves or runs jobs.
 *
 * Each value is rewritten with a checked commit, so instances starting at once, or a dashboard
 * save racing the pass, never lose a change: a value changed meanwhile is left as the other
 * writer made it. A crash in the middle is harmless: values already resealed are skipped next time.
 */
import { listAllProjects, type ProjectSettings, updateProject } from "../../kv/projects.ts";
import { listWalletKeyEntries, updateWalletKeySealed } from "../../kv/wallet_keys.ts";
import { log } from "../../core/log.ts";
import { decryptSecret, encryptSecret, isStale, type SecretPurpose } from "./encryption.ts";
import type { SecretKeys } from "./secret_keys.ts";

/** What a pass did: values re-encrypted, and values no configured SECRET opens. */
interface ResealResult {
  resealed: number;
  unreadable: number;
}

/** The sealed fields of a project's settings and what each is sealed as. */
export const SETTINGS_FIELDS = [
  ["publishingKeyEnc", "publishing_key"],
  ["oauthClientSecretEnc", "oauth_client_secret"],
] as const satisfies readonly (readonly [keyof ProjectSettings, SecretPurpose])[];

/** Re-encrypts every stale stored secret under the current SECRET. */
export async function resealSecrets(kv: Deno.Kv, keys: SecretKeys): Promise<ResealResult> {
  const result: ResealResult = { resealed: 0, unreadable: 0 };
  const reseal = async (sealed: string, purpose: SecretPurpose, projectId: string) => {
    const binding = { purpose, context: projectId };
    try {
      return await encryptSecret(keys, await decryptSecret(keys, sealed, binding), binding);
    } catch {
      result.unreadable++;
      log("error", "Stored secret cannot be decrypted with SECRET or SECRET_PREVIOUS", {
        projectId,
        purpose,
      });
      return null;
    }
  };

  for await (const entry of listWalletKeyEntries(kv)) {
    if (!isStale(keys, entry.value.secretKeyEnc)) continue;
    const projectId = entry.key[1] as string;
    const next = await reseal(entry.value.secretKeyEnc, "wallet_key", projectId);
    if (next && await updateWalletKeySealed(kv, entry, next)) result.resealed++;
  }

  for await (const project of listAllProjects(kv)) {
    for (const [field, purpose] of SETTINGS_FIELDS) {
      const sealed = project.settings[field];
      if (!sealed || !isStale(keys, sealed)) continue;
      const next = await reseal(sealed, purpose, project.id);
      if (!next) continue;
      let changed = false;
      await updateProject(kv, project.id, (current) => {
        // Saved anew meanwhile: that value is the one to keep.
        changed = current.settings[field] === sealed;
        return changed ? { ...current, settings: { ...current.settings, [field]: next } } : current;
      });
      if (changed) result.resealed++;
    }
  }
  return result;
}

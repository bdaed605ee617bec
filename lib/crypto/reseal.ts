/**
 * Re-encrypts stored secrets sealed under a SECRET being rotated away (`SECRET_PREVIOUS`) under the
 * current SECRET: an operation on the store's SECRETs, which any version may need, not a change
 * of format (values of an earlier format are the store migration's, `lib/migrations/`). Runs when
 * an instance starts (`key_check.ts`) and, on every instance that has `SECRET_PREVIOUS`, in the minute sweep
 * (`resealSweep`): during a rolling deploy, instances still running the old SECRET keep sealing
 * new wallet keys under it, and each is found and re-encrypted by the next sweep.
 *
 * Each value is rewritten with a commit checked on the value and on the key-check record
 * (`kv/secret_check.ts`), so instances doing this at once, or a dashboard save racing a pass,
 * never lose a change: a value saved anew meanwhile is left as its writer made it. A crash in the
 * middle is harmless: values already re-encrypted are skipped next time. Every value re-encrypted
 * or found unreadable is one log line with its project and purpose.
 */
import { listAllProjects, type ProjectSettings, updateProject } from "../../kv/projects.ts";
import { getSecretCheckEntry } from "../../kv/secret_check.ts";
import {
  getWalletKeyEntry,
  listWalletKeyEntries,
  updateWalletKeySealed,
} from "../../kv/wallet_keys.ts";
import {
  listAllWebhookEndpointEntries,
  listWebhookEndpointEntries,
  updateWebhookEndpointSecrets,
} from "../../kv/webhooks.ts";
import { listRobloxTokensEntries, replaceSealedRobloxToken } from "../../kv/roblox_tokens.ts";
import { log } from "../../core/log.ts";
import { decryptSecret, encryptSecret, sealedKeyId, type SecretPurpose } from "./encryption.ts";
import type { SecretKeys } from "./secret_keys.ts";

/** One sealed value in the store. */
export interface StoredSecret {
  projectId: string;
  purpose: SecretPurpose;
  sealed: string;
}

/** What a pass did: values re-encrypted, and the values left under another SECRET (none opens them). */
export interface ResealResult {
  resealed: number;
  remaining: StoredSecret[];
}

/** The sealed fields of a project's settings and what each is sealed as. */
const SETTINGS_FIELDS = [
  ["publishingKeyEnc", "publishing_key"],
  ["oauthClientSecretEnc", "oauth_client_secret"],
  ["connectClientSecretEnc", "roblox_app_secret"],
] as const satisfies readonly (readonly [keyof ProjectSettings, SecretPurpose])[];

// A value another writer keeps changing is left for the next pass after this many tries.
const ROUNDS_PER_VALUE = 5;

/**
 * Every sealed value in the store: the wallet keys, the projects' sealed settings, deleted
 * projects included (a deleted project's wallet may still hold funds), the webhook signing
 * secrets (with the one before a rotation while it still signs), then connected games' tokens.
 */
export async function* listStoredSecrets(kv: Deno.Kv): AsyncGenerator<StoredSecret> {
  for await (const entry of listWalletKeyEntries(kv)) {
    const projectId = entry.key[1] as string;
    yield { projectId, purpose: "wallet_key", sealed: entry.value.secretKeyEnc };
  }
  for await (const project of listAllProjects(kv)) {
    for (const [field, purpose] of SETTINGS_FIELDS) {
      const sealed = project.settings[field];
      if (sealed) yield { projectId: project.id, purpose, sealed };
    }
  }
  for await (const { value: endpoint } of listAllWebhookEndpointEntries(kv)) {
    const { projectId } = endpoint;
    yield { projectId, purpose: "webhook_secret", sealed: endpoint.secretEnc };
    if (endpoint.previous) {
      yield { projectId, purpose: "webhook_secret", sealed: endpoint.previous.secretEnc };
    }
  }
  for await (const { key, value: tokens } of listRobloxTokensEntries(kv)) {
    const projectId = key[1] as string;
    yield { projectId, purpose: "roblox_access_token", sealed: tokens.accessTokenEnc };
    yield { projectId, purpose: "roblox_refresh_token", sealed: tokens.refreshTokenEnc };
  }
}

/** Re-encrypts under the current SECRET every stored value not sealed under it that `keys` open. */
export async function resealSecrets(kv: Deno.Kv, keys: SecretKeys): Promise<ResealResult> {
  const result: ResealResult = { resealed: 0, remaining: [] };
  for await (const found of listStoredSecrets(kv)) {
    if (sealedKeyId(found.sealed) === keys.current.id) continue;
    const outcome = await underCurrentSecret(kv, keys, found);
    if (outcome === "resealed") result.resealed++;
    else if (outcome === "unreadable") result.remaining.push(found);
  }
  return result;
}

/**
 * The minute sweep's part: while this instance has SECRET_PREVIOUS and the store's rotation from
 * it is open, re-encrypts what instances still on the old SECRET sealed since the last pass.
 */
export async function resealSweep(ctx: { kv: Deno.Kv; keys: SecretKeys }): Promise<number> {
  const { previous, current } = ctx.keys;
  if (!previous) return 0;
  const record = (await getSecretCheckEntry(ctx.kv)).value;
  if (record?.keyId !== current.id || record.previous?.keyId !== previous.id) return 0;
  const { resealed, remaining } = await resealSecrets(ctx.kv, ctx.keys);
  if (resealed > 0 || remaining.length > 0) {
    log("info", "Stored secrets re-encrypted", {
      resealed,
      unreadable: remaining.length,
      keyId: current.id,
    });
  }
  return resealed;
}

/** What rewriting a stored value came to. */
type Outcome = "resealed" | "unchanged" | "unreadable";

/**
 * How a value is rewritten: the value sealed anew and the key id it is sealed under, `"keep"` when
 * it needs no rewriting, or null when it cannot be opened.
 */
export type Reseal = (sealed: string) => Promise<{ next: string; keyId: string } | "keep" | null>;

/**
 * Rewrites one stored value with `reseal`, in a commit checked on the value and on the key-check
 * record; a value saved anew meanwhile is looked at again (left when it needs nothing). Logs the
 * value, with its project and purpose, when it is rewritten or cannot be opened.
 */
export async function rewriteStoredSecret(
  kv: Deno.Kv,
  found: StoredSecret,
  reseal: Reseal,
): Promise<Outcome> {
  const fields = { projectId: found.projectId, purpose: found.purpose };
  let sealed = found.sealed;
  for (let round = 0; round < ROUNDS_PER_VALUE; round++) {
    const next = await reseal(sealed);
    if (next === "keep") return "unchanged";
    if (next === null) {
      log("error", "Stored secret cannot be decrypted with SECRET or SECRET_PREVIOUS", {
        ...fields,
        keyId: sealedKeyId(sealed),
      });
      return "unreadable";
    }
    const written = found.purpose === "wallet_key"
      ? await replaceWalletKey(kv, found.projectId, sealed, next.next, next.keyId)
      : found.purpose === "webhook_secret"
      ? await replaceWebhookSecret(kv, found.projectId, sealed, next)
      : found.purpose === "roblox_access_token" || found.purpose === "roblox_refresh_token"
      ? await replaceSealedRobloxToken(kv, found.projectId, {
        sealed,
        next: next.next,
        sealedUnder: next.keyId,
      })
      : await replaceSetting(kv, found, sealed, next.next, next.keyId);
    if (written === true) {
      log("info", "Stored secret re-encrypted", {
        ...fields,
        from: sealedKeyId(sealed),
        to: next.keyId,
      });
      return "resealed";
    }
    // Saved anew (or gone) meanwhile: that value is the one to keep, unless it needs this too.
    if (written === null) return "unchanged";
    sealed = written;
  }
  return "unchanged";
}

// Re-encrypts a value not sealed under the current SECRET with it.
function underCurrentSecret(kv: Deno.Kv, keys: SecretKeys, found: StoredSecret): Promise<Outcome> {
  const binding = { purpose: found.purpose, context: found.projectId };
  return rewriteStoredSecret(kv, found, async (sealed) => {
    if (sealedKeyId(sealed) === keys.current.id) return "keep";
    try {
      const next = await encryptSecret(keys, await decryptSecret(keys, sealed, binding), binding);
      return { next, keyId: keys.current.id };
    } catch {
      return null;
    }
  });
}

// True when replaced; else what the store holds now (null: nothing), to look at again.
async function replaceWalletKey(
  kv: Deno.Kv,
  projectId: string,
  sealed: string,
  next: string,
  keyId: string,
): Promise<true | string | null> {
  const entry = await getWalletKeyEntry(kv, projectId);
  if (!entry.value) return null;
  if (entry.value.secretKeyEnc !== sealed) return entry.value.secretKeyEnc;
  const ok = await updateWalletKeySealed(kv, entry as Deno.KvEntry<typeof entry.value>, {
    secretKeyEnc: next,
    sealedUnder: keyId,
  });
  return ok ? true : sealed;
}

async function replaceSetting(
  kv: Deno.Kv,
  found: StoredSecret,
  sealed: string,
  next: string,
  keyId: string,
): Promise<true | string | null> {
  const field = SETTINGS_FIELDS.find(([, purpose]) => purpose === found.purpose)![0];
  let now = null as string | null;
  await updateProject(kv, found.projectId, (project) => {
    now = project.settings[field] ?? null;
    return now === sealed
      ? { ...project, settings: { ...project.settings, [field]: next } }
      : project;
  }, { sealedUnder: keyId });
  return now === sealed ? true : now;
}

// The endpoint holding `sealed` (as its secret or the one before) gets `next` in its place.
async function replaceWebhookSecret(
  kv: Deno.Kv,
  projectId: string,
  sealed: string,
  next: { next: string; keyId: string },
): Promise<true | null> {
  for (const entry of await listWebhookEndpointEntries(kv, projectId)) {
    const { secretEnc, previous, rotatedAt } = entry.value;
    if (secretEnc !== sealed && previous?.secretEnc !== sealed) continue;
    const ok = await updateWebhookEndpointSecrets(kv, entry, {
      secretEnc: secretEnc === sealed ? next.next : secretEnc,
      previous: previous && previous.secretEnc === sealed
        ? { ...previous, secretEnc: next.next }
        : previous,
      rotatedAt,
      sealedUnder: next.keyId,
    });
    // Changed meanwhile (a rotation): looked at again by the next pass, if it still needs it.
    return ok ? true : null;
  }
  return null;
}

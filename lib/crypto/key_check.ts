/**
 * Start-up guard: the store remembers a key-check value of the SECRET it was first started with,
 * and an instance with another SECRET refuses to start instead of running with wallet keys it
 * cannot decrypt (for example after `./data/secret` was lost next to a kept store).
 *
 * With `SECRET_PREVIOUS` set to the stored SECRET, the start is a rotation: every stored secret is
 * re-encrypted under the new SECRET, then the check value moves to it. A store from before the
 * check existed is judged by one of its sealed values.
 */
import { ConfigError } from "../config.ts";
import { listAllProjects } from "../../kv/projects.ts";
import {
  getSecretCheckEntry,
  type SecretCheckRecord,
  setSecretCheck,
} from "../../kv/secret_check.ts";
import { listWalletKeyEntries } from "../../kv/wallet_keys.ts";
import type { Clock } from "../../core/clock.ts";
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { log } from "../../core/log.ts";
import { decryptSecret, type SealBinding } from "./encryption.ts";
import { resealSecrets, SETTINGS_FIELDS } from "./reseal.ts";
import type { SecretKeys, SecretKeySet } from "./secret_keys.ts";

/** Thrown when the configured SECRET is not the one the store runs under; the message says what to do. */
export class SecretMismatchError extends ConfigError {}

/** Checks SECRET against the store, rotating to it when `SECRET_PREVIOUS` matches; throws `SecretMismatchError`. */
export async function checkSecret(
  deps: { kv: Deno.Kv; keys: SecretKeys; clock: Clock },
): Promise<void> {
  const { kv, keys, clock } = deps;
  await commitWithRetry("check SECRET", async () => {
    const entry = await getSecretCheckEntry(kv);
    const under = entry.value
      ? keySetWithCheck(keys, entry.value.check)
      : await keySetOfStoredSecret(kv, keys);
    if (under === undefined) throw mismatch(keys, entry.value?.keyId);
    const rotating = keys.previous !== null && under === keys.previous;
    if (entry.value?.resealed && !rotating && !keys.previous) return;

    if (rotating) log("warn", "Rotating SECRET: re-encrypting stored secrets", {});
    const { resealed, unreadable } = await resealSecrets(kv, keys);
    const record: SecretCheckRecord = {
      keyId: keys.current.id,
      check: keys.current.check,
      resealed: unreadable === 0,
      updatedAt: clock.now(),
    };
    if (await setSecretCheck(kv, entry, record)) {
      if (resealed || rotating) {
        log("info", "Stored secrets re-encrypted", { resealed, unreadable });
      }
      if (keys.previous && !rotating) {
        log("info", "SECRET_PREVIOUS is no longer needed: the store runs under SECRET", {});
      }
      return;
    }
    return RETRY;
  }, { rounds: 10 });
}

// undefined: neither SECRET matches.
function keySetWithCheck(keys: SecretKeys, check: string): SecretKeySet | undefined {
  if (check === keys.current.check) return keys.current;
  if (keys.previous && check === keys.previous.check) return keys.previous;
  return undefined;
}

// For a store without a check record: the SECRET one of its sealed values opens with; null when
// it holds none yet (any SECRET will do), undefined when neither SECRET opens it.
async function keySetOfStoredSecret(
  kv: Deno.Kv,
  keys: SecretKeys,
): Promise<SecretKeySet | null | undefined> {
  const sample = await findSealedValue(kv);
  if (!sample) return null;
  for (const keySet of [keys.current, keys.previous]) {
    if (!keySet) continue;
    try {
      await decryptSecret({ current: keySet, previous: null }, sample.sealed, sample.binding);
      return keySet;
    } catch {
      // Not sealed under this SECRET.
    }
  }
  return undefined;
}

async function findSealedValue(
  kv: Deno.Kv,
): Promise<{ sealed: string; binding: SealBinding } | null> {
  for await (const entry of listWalletKeyEntries(kv)) {
    const context = entry.key[1] as string;
    return { sealed: entry.value.secretKeyEnc, binding: { purpose: "wallet_key", context } };
  }
  for await (const project of listAllProjects(kv)) {
    for (const [field, purpose] of SETTINGS_FIELDS) {
      const sealed = project.settings[field];
      if (sealed) return { sealed, binding: { purpose, context: project.id } };
    }
  }
  return null;
}

function mismatch(keys: SecretKeys, storedKeyId: string | undefined): SecretMismatchError {
  const stored = storedKeyId ? `key id ${storedKeyId}` : "judged by its stored secrets";
  const given = keys.previous
    ? `neither SECRET (key id ${keys.current.id}) nor SECRET_PREVIOUS (key id ${keys.previous.id}) is`
    : `SECRET (key id ${keys.current.id}) is not`;
  return new SecretMismatchError(
    `Cannot start: SECRET does not match the store: ${given} the one it was first started ` +
      `with (${stored}). Start with that SECRET (or restore the data/secret file it was ` +
      "generated into); to change it, set SECRET_PREVIOUS to the old SECRET for one restart.",
  );
}

/**
 * Start-up guard: the store remembers a key-check value of the SECRET it runs under
 * (`kv/secret_check.ts`), and an instance with another SECRET refuses to start instead of running
 * with wallet keys it cannot decrypt (for example after `./data/secret` was lost next to a kept
 * store).
 *
 * Rotation survives a rolling deploy, where instances with the old SECRET and the new one run
 * side by side:
 * - The first start with `SECRET_PREVIOUS` set to the store's SECRET opens the rotation: the
 *   record names the new SECRET and keeps the old one as `previous`, and stored secrets are
 *   re-encrypted. Both SECRETs open values from then on, on instances that have both.
 * - Instances still on the old SECRET (running, or started during the overlap) keep working and
 *   sealing under it; every instance with `SECRET_PREVIOUS` re-encrypts such values at its start
 *   and in each minute sweep (`reseal.ts`).
 * - A start without `SECRET_PREVIOUS` closes the rotation, but only once no stored value is
 *   sealed under the old SECRET: otherwise it refuses, naming how many remain. From the close on,
 *   the store takes no value sealed under the old SECRET, so none can be stranded.
 * A store without a record (a new one) is judged by its stored values; a record of an earlier
 * version is completed by the store migration before this runs (`lib/migrations/`).
 */
import { ConfigError } from "../config.ts";
import {
  getSecretCheckEntry,
  type SecretCheckRecord,
  setSecretCheck,
} from "../../kv/secret_check.ts";
import type { Clock } from "../../core/clock.ts";
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { log } from "../../core/log.ts";
import { decryptSecret, sealedKeyId, type SecretPurpose } from "./encryption.ts";
import { listStoredSecrets, resealSecrets, type StoredSecret } from "./reseal.ts";
import type { SecretKeys, SecretKeySet } from "./secret_keys.ts";

/** Thrown when the configured SECRET is not the one the store runs under; the message says what to do. */
export class SecretMismatchError extends ConfigError {}

/** Thrown when a start would leave stored secrets sealed under a SECRET no instance has; the message names how many. */
export class SecretStillNeededError extends ConfigError {}

type SecretRef = { keyId: string; check: string };

/**
 * Checks SECRET against the store and moves a rotation on (see the header); throws
 * `SecretMismatchError` or `SecretStillNeededError`, leaving the store as it was.
 */
export async function checkSecret(
  deps: { kv: Deno.Kv; keys: SecretKeys; clock: Clock },
): Promise<void> {
  const { kv, keys, clock } = deps;
  const reseal = await commitWithRetry("check SECRET", async () => {
    const entry = await getSecretCheckEntry(kv);
    const stored = entry.value;
    const storeKey = stored
      ? keySetWithCheck(keys, stored.check)
      : await keySetOfStoredSecret(kv, keys);
    if (storeKey === undefined) {
      if (stored?.previous?.check !== keys.current.check) throw mismatch(keys, stored?.keyId);
      log("warn", "This instance runs with the SECRET being rotated away", {
        keyId: keys.current.id,
        storeKeyId: stored.keyId,
      });
      return false;
    }
    const rotating = storeKey !== null && storeKey === keys.previous;
    const previous = nextPrevious(stored, keys, rotating);
    await refuseStranding(kv, keys, { stored, previous });
    const record: SecretCheckRecord = {
      keyId: keys.current.id,
      check: keys.current.check,
      previous,
      staleWrites: sameRef(previous, stored?.previous) ? stored?.staleWrites ?? 0 : 0,
      updatedAt: clock.now(),
    };
    const unchanged = stored?.keyId === record.keyId && sameRef(stored.previous, previous);
    if (!unchanged && !(await setSecretCheck(kv, entry, record))) return RETRY;
    if (rotating) {
      log("warn", "Rotating SECRET: re-encrypting stored secrets", {
        from: keys.previous!.id,
        to: keys.current.id,
      });
    } else if (stored?.previous && !previous) {
      log("info", "SECRET rotation closed: no stored secret is sealed under the previous one", {
        keyId: keys.current.id,
        previousKeyId: stored.previous.keyId,
      });
    } else if (keys.previous && previous?.keyId !== keys.previous.id) {
      log("info", "SECRET_PREVIOUS is not needed: no rotation from it is open", {
        keyId: keys.current.id,
      });
    }
    return keys.previous !== null;
  }, { rounds: 10 });

  if (!reseal) return;
  const { resealed, remaining } = await resealSecrets(kv, keys);
  log("info", "Stored secrets re-encrypted", {
    resealed,
    unreadable: remaining.length,
    keyId: keys.current.id,
  });
}

// What the record keeps as `previous` after this start: the SECRET being rotated away while
// values may remain under it. A start without SECRET_PREVIOUS closes the rotation; one with it
// opens it (or keeps it open).
function nextPrevious(
  stored: SecretCheckRecord | null,
  keys: SecretKeys,
  rotating: boolean,
): SecretRef | null {
  if (!keys.previous) return null;
  const mine = { keyId: keys.previous.id, check: keys.previous.check };
  if (rotating || !stored) return mine;
  return stored.previous;
}

// Refuses a start that would drop a SECRET stored values are still sealed under: the record's
// previous one when it is being dropped, and on a store without a record, any SECRET but this
// one. The count is checked by the record's commit, so a value sealed under the old SECRET
// meanwhile makes the start count again.
async function refuseStranding(
  kv: Deno.Kv,
  keys: SecretKeys,
  next: { stored: SecretCheckRecord | null; previous: SecretRef | null },
): Promise<void> {
  const { stored, previous } = next;
  const kept = new Set([keys.current.id, previous?.keyId]);
  const dropped = stored
    ? [stored.keyId, stored.previous?.keyId].filter((id): id is string =>
      id !== undefined && !kept.has(id)
    )
    : null;
  if (dropped?.length === 0 || (!stored && keys.previous)) return;
  const stranded = (await Array.fromAsync(listStoredSecrets(kv))).filter((found) => {
    const id = sealedKeyId(found.sealed);
    return dropped ? dropped.includes(id) : !kept.has(id);
  });
  if (stranded.length > 0) throw secretStillNeeded(keys, stranded);
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
  let sample: StoredSecret | undefined;
  for await (const found of listStoredSecrets(kv)) {
    sample = found;
    break;
  }
  if (!sample) return null;
  const binding = { purpose: sample.purpose, context: sample.projectId };
  for (const keySet of [keys.current, keys.previous]) {
    if (!keySet) continue;
    try {
      await decryptSecret({ current: keySet, previous: null, next: null }, sample.sealed, binding);
      return keySet;
    } catch {
      // Not sealed under this SECRET.
    }
  }
  return undefined;
}

function sameRef(a: SecretRef | null | undefined, b: SecretRef | null | undefined): boolean {
  return (a ?? null)?.check === (b ?? null)?.check;
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

const PURPOSE_NAMES: Record<SecretPurpose, string> = {
  wallet_key: "wallet key",
  oauth_client_secret: "OAuth client secret",
  publishing_key: "publishing key",
  webhook_secret: "webhook signing secret",
  dashboard_flash: "dashboard message",
  roblox_app_secret: "Roblox connecting app secret",
  roblox_access_token: "Roblox access token",
  roblox_refresh_token: "Roblox refresh token",
};

/** The refusal of a start that would leave `stranded` sealed under a SECRET no instance has. */
export function secretStillNeeded(
  keys: SecretKeys,
  stranded: StoredSecret[],
): SecretStillNeededError {
  const count = (items: unknown[], noun: string) =>
    `${items.length} ${noun}${items.length === 1 ? "" : "s"}`;
  const byPurpose = Object.entries(PURPOSE_NAMES).flatMap(([purpose, name]) => {
    const of = stranded.filter((found) => found.purpose === purpose);
    return of.length > 0 ? [count(of, name)] : [];
  });
  const ids = [...new Set(stranded.map((found) => sealedKeyId(found.sealed)))].join(", ");
  const fix = keys.previous
    ? "Finish the rotation that is still open first: start with SECRET set to this " +
      "SECRET_PREVIOUS and SECRET_PREVIOUS set to the SECRET before it, until they are " +
      "re-encrypted, then start once without SECRET_PREVIOUS."
    : "Keep SECRET_PREVIOUS set to the old SECRET: instances that have it re-encrypt these at " +
      "their start and every minute (including values that instances still running the old " +
      "SECRET seal meanwhile). Start without it once none is left.";
  return new SecretStillNeededError(
    `Cannot start: ${count(stranded, "stored secret")} (${byPurpose.join(", ")}) ` +
      `${stranded.length === 1 ? "is" : "are"} still sealed under key id ${ids}, which ` +
      `this start would leave no instance able to open. ${fix}`,
  );
}

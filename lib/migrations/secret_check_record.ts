/**
 * A key-check record written before rotations were tracked has no `previous` (it knew nothing of
 * another SECRET) and no `staleWrites`. It is completed as the key check judged such a record: by
 * an instance of the record's SECRET, with `previous` set to this instance's SECRET_PREVIOUS when
 * it has one (a rotation from it may be open), and otherwise to none, but only when no stored
 * value is sealed under another SECRET (the start is refused, naming them, when some are). An
 * instance of another SECRET leaves it: the key check refuses that SECRET.
 */
import { sealedKeyId } from "../crypto/encryption.ts";
import { secretStillNeeded } from "../crypto/key_check.ts";
import { listStoredSecrets } from "../crypto/reseal.ts";
import {
  getSecretCheckEntry,
  type SecretCheckRecord,
  setSecretCheck,
} from "../../kv/secret_check.ts";
import type { MigrationStep } from "./step.ts";

/** Completes a key-check record of an earlier version; throws `SecretStillNeededError` as above. */
export const completeSecretCheckRecord: MigrationStep = async ({ kv, keys, clock }) => {
  for (;;) {
    const entry = await getSecretCheckEntry(kv);
    const stored = entry.value as
      | Partial<SecretCheckRecord> & Pick<SecretCheckRecord, "keyId" | "check">
      | null;
    if (!stored || stored.previous !== undefined) return { changed: 0, complete: true };
    if (stored.check !== keys.current.check && stored.check !== keys.previous?.check) {
      return { changed: 0, complete: false };
    }
    if (!keys.previous) {
      const stranded = [];
      for await (const found of listStoredSecrets(kv)) {
        if (sealedKeyId(found.sealed) !== keys.current.id) stranded.push(found);
      }
      if (stranded.length > 0) throw secretStillNeeded(keys, stranded);
    }
    const record: SecretCheckRecord = {
      keyId: stored.keyId,
      check: stored.check,
      previous: keys.previous ? { keyId: keys.previous.id, check: keys.previous.check } : null,
      staleWrites: 0,
      updatedAt: clock.now(),
    };
    if (await setSecretCheck(kv, entry, record)) return { changed: 1, complete: true };
  }
};

/** Reads of more keys than one `getMany` takes. */

/** `getMany`'s limit on keys per call. */
export const KEYS_PER_CALL = 10;

/**
 * Reads `keys` with one `getMany` per ten, all at once; the entries come back in key order. (Over KV
 * Connect, `openKv()` cuts each call further, into calls its client sends at once.)
 */
export async function getManyAtOnce<T>(
  kv: Deno.Kv,
  keys: readonly Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<T>[]> {
  const calls = [];
  for (let i = 0; i < keys.length; i += KEYS_PER_CALL) {
    calls.push(kv.getMany<T[]>(keys.slice(i, i + KEYS_PER_CALL)));
  }
  return (await Promise.all(calls)).flat();
}

/**
 * Reads of more keys than one `getMany` should carry. A call takes at most ten keys, and over KV
 * Connect Deno's client sends a request of more than about 1 KB some 40 ms late (its connections
 * leave Nagle's algorithm on; several small requests made in one turn leave together), so keys are
 * read in calls under both bounds, all made at once.
 */

/** `getMany`'s limit on keys per call. */
export const KEYS_PER_CALL = 10;
// A read carries each key twice (a range's start and end): this much of keys leaves at once.
const KEY_BYTES_PER_CALL = 400;

const encoder = new TextEncoder();

/** Reads `keys` in calls of at most ten keys and about 1 KB, side by side; entries in key order. */
export async function getManyAtOnce<T>(
  kv: Deno.Kv,
  keys: readonly Deno.KvKey[],
): Promise<Deno.KvEntryMaybe<T>[]> {
  const calls = [];
  let call: Deno.KvKey[] = [];
  let bytes = 0;
  for (const key of keys) {
    const size = keyBytes(key);
    if (call.length === KEYS_PER_CALL || (call.length > 0 && bytes + size > KEY_BYTES_PER_CALL)) {
      calls.push(kv.getMany<T[]>(call));
      call = [];
      bytes = 0;
    }
    call.push(key);
    bytes += size;
  }
  if (call.length > 0) calls.push(kv.getMany<T[]>(call));
  return (await Promise.all(calls)).flat();
}

/** About the bytes of `key` as the store encodes it. */
function keyBytes(key: Deno.KvKey): number {
  let bytes = 0;
  for (const part of key) {
    if (typeof part === "string") bytes += encoder.encode(part).length + 2;
    else if (part instanceof Uint8Array) bytes += part.length + 2;
    else bytes += 10;
  }
  return bytes;
}

/** A store key as a string, to keep keys in maps and sets. */

/** A key as a string that no other key has: parts keep their types (a string "1" is not 1). */
export function keyId(key: Deno.KvKey): string {
  return JSON.stringify(
    key.map((part) =>
      typeof part === "bigint"
        ? { n: part.toString() }
        : part instanceof Uint8Array
        ? { u: [...part] }
        : part
    ),
  );
}

/**
 * Upper bounds of what a store call sends over KV Connect, computed from its keys and values without
 * encoding them: `kv/open_kv.ts` cuts reads into calls that stay under the 1,024 bytes at which
 * Deno's client holds a body back, and sends a commit behind a prompt only when its body may reach
 * them.
 *
 * | Part                        | Encoded as                                        | Bound                    |
 * | --------------------------- | ------------------------------------------------- | ------------------------ |
 * | key part: string, bytes     | tag, bytes with each 0x00 escaped, terminator     | 2 + bytes + zero bytes   |
 * | key part: number, bigint    | tag and 8 bytes; tag, length and digits           | 9; 3 + digits / 2        |
 * | value: `Uint8Array`         | its bytes                                         | its length               |
 * | value: `Deno.KvU64`, a sum  | 8 bytes                                           | 8                        |
 * | value: anything else        | V8's serialization (`v8Bytes`)                    | see `v8Bytes`            |
 * | read of a key               | protobuf fields around the key, sent twice        | 2 key + 14               |
 * | check / mutation            | protobuf fields around the key (and value)        | key + 20 / key + value + 30 |
 */

/** Bodies of this many bytes or more wait for the server's acknowledgement (`kv/open_kv.ts`). */
export const HELD_BODY_BYTES = 1024;

const encoder = new TextEncoder();
// V8 writes a string with a character past Latin-1 two bytes a character, any other one.
const TWO_BYTE = /[\u0100-\uffff]/;

/** At most the bytes of `key` as the store encodes it. */
export function keyBytes(key: Deno.KvKey): number {
  let bytes = 0;
  for (const part of key) {
    if (typeof part === "string") bytes += escapedBytes(encoder.encode(part));
    else if (part instanceof Uint8Array) bytes += escapedBytes(part);
    else if (typeof part === "bigint") bytes += 3 + Math.ceil(part.toString(16).length / 2);
    else bytes += 9;
  }
  return bytes;
}

function escapedBytes(bytes: Uint8Array): number {
  let zeros = 0;
  for (const byte of bytes) if (byte === 0) zeros++;
  return 2 + bytes.length + zeros;
}

/** At most the bytes of a value as stored: raw bytes, a 64-bit number, or V8's serialization. */
export function valueBytes(value: unknown): number {
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Deno.KvU64) return 8;
  // V8's header: a tag and its format's version.
  return 2 + v8Bytes(value, 0);
}

/** At most the bytes of a read of `key` in a read's body (the range from it to just past it). */
export function readBytes(key: Deno.KvKey): number {
  const bytes = keyBytes(key);
  return 2 * (bytes + varint(bytes + 1)) + 10;
}

/** At most the bytes of a check of `key` in a commit's body. */
export function checkBytes(key: Deno.KvKey): number {
  const bytes = keyBytes(key);
  return bytes + varint(bytes) + 16;
}

/**
 * At most the bytes of a mutation of `key` in a commit's body, its value taking `value` bytes (and
 * an expiry time with `expires`).
 */
export function mutationBytes(key: Deno.KvKey, value: number, expires = false): number {
  const bytes = keyBytes(key);
  return bytes + value + varint(bytes) + 2 * varint(value + 8) + (expires ? 11 : 0) + 14;
}

/** Bytes of `n` as a varint. */
function varint(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x20_0000 ? 3 : n < 0x1000_0000 ? 4 : 5;
}

/**
 * At most the bytes V8's serializer writes for `value`: tags, lengths and counts as varints,
 * strings one byte a character when V8 can (or two, and an alignment byte), small integers as
 * zigzag varints and other numbers as 8-byte doubles, a typed array with its whole buffer;
 * `Infinity` for what is not worth bounding (class instances, deep nesting).
 */
function v8Bytes(value: unknown, depth: number): number {
  switch (typeof value) {
    case "string":
      return stringBytes(value);
    case "number":
      return numberBytes(value);
    case "boolean":
    case "undefined":
      return 1;
    case "bigint":
      return 4 + 8 * Math.ceil(value.toString(16).replace("-", "").length / 16);
    case "object":
      break;
    default:
      return Infinity;
  }
  if (value === null) return 1;
  if (depth > 32) return Infinity;
  if (ArrayBuffer.isView(value)) return 25 + value.buffer.byteLength;
  if (value instanceof ArrayBuffer) return 6 + value.byteLength;
  if (value instanceof Date) return 9;
  let bytes = 0;
  let count = 0;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) bytes += v8Bytes(value[i], depth + 1);
    return bytes + 3 + 3 * varint(value.length);
  }
  if (value instanceof Map) {
    for (const [k, v] of value) bytes += v8Bytes(k, depth + 1) + v8Bytes(v, depth + 1);
    return bytes + 2 + varint(2 * value.size);
  }
  if (value instanceof Set) {
    for (const v of value) bytes += v8Bytes(v, depth + 1);
    return bytes + 2 + varint(value.size);
  }
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return Infinity;
  for (const name in value) {
    // An integer-like name is written as a number, never longer than as text.
    bytes += stringBytes(name) + v8Bytes((value as Record<string, unknown>)[name], depth + 1);
    count++;
  }
  return bytes + 2 + varint(count);
}

function stringBytes(text: string): number {
  if (!TWO_BYTE.test(text)) return 1 + varint(text.length) + text.length;
  return 2 + varint(2 * text.length) + 2 * text.length;
}

// Integers V8 keeps as small integers, written as zigzag varints; any other number is a double.
function numberBytes(n: number): number {
  if (!Number.isInteger(n) || n < -(2 ** 30) || n >= 2 ** 30) return 9;
  return 1 + varint(n < 0 ? -2 * n - 1 : 2 * n);
}

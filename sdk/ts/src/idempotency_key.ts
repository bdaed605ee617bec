/**
 * Stable idempotency keys from a caller's own identifiers, exactly as the Luau SDK makes them
 * (`IdempotencyKey.luau`; both run `sdk/client_rules.json`). A key names one intended payment:
 * the same round and player must give the same key after every retry, restart or second worker,
 * so the service can recognise a repeat and pay at most once. A fresh random key per call defeats
 * that.
 *
 * Parts are joined with `:`; a `:` or `%` inside a part is percent-encoded, so different part lists
 * never give the same key. A key over 128 bytes of UTF-8 keeps its first 111 bytes (never half a
 * character) and a hash of the whole, so it stays stable and distinct within the service's limit.
 */

const MAX_BYTES = 128;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A key such as `round-reward:8f2c:1001` from `("round-reward", "8f2c", 1001)`. */
export function idempotencyKey(
  ...parts: Array<string | number | bigint>
): string {
  if (parts.length === 0) {
    throw new TypeError("idempotencyKey needs at least one part");
  }
  const key = parts.map((part, i) => escape(textOf(part, i + 1))).join(":");
  const bytes = encoder.encode(key);
  if (bytes.length <= MAX_BYTES) return key;
  let kept = MAX_BYTES - 17;
  // A byte 10xxxxxx continues a character: stop before the character it belongs to.
  while (kept > 0 && (bytes[kept]! & 0xc0) === 0x80) kept--;
  return `${decoder.decode(bytes.subarray(0, kept))}#${hash(bytes)}`;
}

function textOf(part: string | number | bigint, position: number): string {
  if (typeof part === "string") return part;
  if (typeof part === "bigint") return part.toString();
  if (typeof part === "number" && Number.isSafeInteger(part)) {
    return String(part);
  }
  throw new TypeError(
    `idempotencyKey part ${position} must be a string or a whole number`,
  );
}

function escape(text: string): string {
  return text.replace(
    /[%:]/g,
    (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** FNV-1a over the bytes, twice with different offsets: 16 hex digits. */
function hash(bytes: Uint8Array): string {
  let a = 2166136261;
  let b = 3735928559;
  for (const byte of bytes) {
    a = Math.imul(a ^ byte, 16777619) >>> 0;
    b = Math.imul(b ^ byte, 16777619) >>> 0;
  }
  return a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0");
}

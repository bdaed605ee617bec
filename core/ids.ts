/** ULID generation: sortable by creation time, so KV listings come out in creation order. */

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** What a ULID looks like (Crockford base32, 26 characters). */
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

// The time part: 10 digits of milliseconds.
function timePart(time: number): string {
  let part = "";
  let t = time;
  for (let i = 0; i < 10; i++) {
    part = ALPHABET[t % 32] + part;
    t = Math.floor(t / 32);
  }
  return part;
}

// The random part: 16 digits of 0 to 31.
function randomDigits(): number[] {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte % 32);
}

/** Returns a new ULID for the given time (default now). */
export function ulid(time = Date.now()): string {
  return timePart(time) + randomDigits().map((d) => ALPHABET[d]).join("");
}

/** The smallest ULID of `time`: every id made at or after it sorts at or after this one. */
export function ulidFloor(time: number): string {
  return timePart(time) + ALPHABET[0]!.repeat(16);
}

/**
 * A source of ULIDs of given times that count up within a millisecond: each is greater than the
 * last one it gave for the same time, so records made one after the other in one process list in
 * that order. Each source keeps its own last id, so one fed a test's clock held still is not
 * disturbed by one fed the real time.
 */
export function ulidSequence(): (time: number) => string {
  let lastTime = -1;
  let lastRandom: number[] = [];
  return (time) => {
    lastRandom = time === lastTime ? nextDigits(lastRandom) : randomDigits();
    lastTime = time;
    return timePart(time) + lastRandom.map((d) => ALPHABET[d]).join("");
  };
}

const processIds = ulidSequence();
let latest = -1;

/**
 * Returns a new ULID for now, greater than every one this function returned before in this
 * process (a clock stepping back keeps the latest time): ids made in one go (a poll's events,
 * oldest first) keep their order in a listing.
 */
export function monotonicUlid(): string {
  latest = Math.max(Date.now(), latest);
  return processIds(latest);
}

// Adds one: the last digit below 31 goes up, the 31s after it wrap to 0 (all 31s: all wrap).
function nextDigits(digits: number[]): number[] {
  const i = digits.findLastIndex((d) => d !== 31);
  return digits.map((d, j) => j < i ? d : j === i ? d + 1 : 0);
}

/** Returns `bytes` random bytes encoded as base64url without padding. */
export function randomToken(bytes = 32): string {
  return encodeBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** Encodes bytes as base64url without padding. */
export function encodeBase64Url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Decodes base64url (padding optional); throws on invalid input. */
export function decodeBase64Url(text: string): Uint8Array {
  const b64 = text.replaceAll("-", "+").replaceAll("_", "/");
  const binary = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

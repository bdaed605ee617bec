/** ULID generation: sortable by creation time, so KV listings come out in creation order. */

const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** What a ULID looks like (Crockford base32, 26 characters). */
export const ULID_PATTERN = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** Returns a new ULID for the given time (default now). */
export function ulid(time = Date.now()): string {
  let timePart = "";
  let t = time;
  for (let i = 0; i < 10; i++) {
    timePart = ALPHABET[t % 32] + timePart;
    t = Math.floor(t / 32);
  }
  const random = crypto.getRandomValues(new Uint8Array(16));
  let randomPart = "";
  for (const byte of random) randomPart += ALPHABET[byte % 32];
  return timePart + randomPart;
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

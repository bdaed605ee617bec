/** Hashing and constant-time comparison helpers. */
import { createHash } from "node:crypto";

/**
 * SHA-256 of a UTF-8 string, as lowercase hex. Synchronous on purpose: every `/v1` request hashes
 * its API key, and WebCrypto's `digest` is an async op handed to a worker thread, about 20 times
 * the cost of hashing a key in place (docs/performance.md).
 */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Compares two strings in time that depends only on their lengths. */
export function timingSafeEqual(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  let diff = x.length ^ y.length;
  for (let i = 0; i < Math.max(x.length, y.length); i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}

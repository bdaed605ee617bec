/** Shape checks for addresses and signatures taken from requests, before any RPC call. */
import { type Address, isAddress, isSignature, type Signature } from "@solana/kit";

/** The address when `text` is base58 for exactly 32 bytes, otherwise null (`"123"` is null). */
export function parseAddress(text: string | undefined): Address | null {
  return text !== undefined && isAddress(text) ? text : null;
}

/** The signature when `text` is base58 for exactly 64 bytes, otherwise null. */
export function parseSignature(text: string | undefined): Signature | null {
  if (text === undefined) return null;
  try {
    return isSignature(text) ? text : null;
  } catch {
    // Kit's check throws instead of answering false for characters outside the base58 alphabet.
    return null;
  }
}

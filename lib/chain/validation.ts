/** Shape checks for addresses and signatures taken from requests, before any RPC call. */
import { base58 } from "@scure/base";
import { type Address, isSignature, type Signature } from "@solana/kit";

// Decoded addresses remembered (program ids, the managed wallets, recent recipients): Kit decodes
// base58 with BigInt arithmetic, about 0.1 ms an address, and a payout checks or writes several.
const MAX_REMEMBERED = 20_000;
const remembered = new Map<string, Uint8Array>();

/** The 32 bytes of a base58 address; null when `text` is not one. */
export function addressBytes(text: string): Uint8Array | null {
  const known = remembered.get(text);
  if (known) return known;
  // An address is 32 to 44 base58 characters (32 zero bytes to 32 bytes of 255).
  if (text.length < 32 || text.length > 44) return null;
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(text);
  } catch {
    return null;
  }
  if (bytes.length !== 32) return null;
  if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
  remembered.set(text, bytes);
  return bytes;
}

/** The address when `text` is base58 for exactly 32 bytes, otherwise null (`"123"` is null). */
export function parseAddress(text: string | undefined): Address | null {
  return text !== undefined && addressBytes(text) ? text as Address : null;
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

/** Sign In With Solana: the message layout both sign-ins use, and the ed25519 signature check. */
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { ApiError } from "../../core/api_error.ts";

/** The variable parts of a sign-in message. */
interface SiwsMessageFields {
  /** The service's host (with port when not the default). */
  host: string;
  /**
   * What signing authorises when it is not a sign-in (a withdrawal, a key export): the first line
   * then asks for that, so neither the wallet nor its owner reads it as signing in.
   */
  authorises?: string;
  address: string;
  statement: string;
  uri: string;
  chainId: string;
  nonce: string;
  issuedAt: number;
  expiresAt: number;
}

/** Name of the chain in the first line of the message. */
const CHAIN_NAME = "Solana";

/** Builds the message, one spec line per array entry, joined by line feeds. */
export function createSiwsMessage(fields: SiwsMessageFields): string {
  return [
    fields.authorises
      ? `${fields.host} asks you to authorise ${fields.authorises} with your ${CHAIN_NAME} account:`
      : `${fields.host} wants you to sign in with your ${CHAIN_NAME} account:`,
    fields.address,
    "",
    oneLine(fields.statement),
    "",
    `URI: ${fields.uri}`,
    "Version: 1",
    `Chain ID: ${fields.chainId}`,
    `Nonce: ${fields.nonce}`,
    `Issued At: ${new Date(fields.issuedAt).toISOString()}`,
    `Expiration Time: ${new Date(fields.expiresAt).toISOString()}`,
  ].join("\n");
}

/** A fresh nonce: 32 lowercase hex characters, alphanumeric as SIWS requires. */
export function createSiwsNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Returns the 32 public-key bytes of a base58 wallet address, or null when it is not one. */
export function decodeAddress(address: string): Uint8Array | null {
  if (address.length < 32 || address.length > 44) return null;
  try {
    const bytes = base58.decode(address);
    return bytes.length === 32 ? bytes : null;
  } catch {
    return null;
  }
}

/** Decodes a base64 signature (padding optional), or null when it is not exactly 64 bytes. */
function decodeSignature(signature: string): Uint8Array | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return null;
  try {
    const bytes = Uint8Array.from(atob(signature), (ch) => ch.charCodeAt(0));
    return bytes.length === 64 ? bytes : null;
  } catch {
    return null;
  }
}

/** Throws 400 `invalid_signature` unless `signature` is the wallet's ed25519 signature of the exact message bytes. */
export function assertSignedBy(message: string, signature: string, address: string): void {
  if (!decodeSignature(signature)) {
    throw new ApiError("invalid_signature", "Malformed signature");
  }
  if (!isSignedBy(message, signature, address)) {
    throw new ApiError("invalid_signature", "The signature does not match this wallet");
  }
}

/** True when `signature` (base64) is the wallet's ed25519 signature of the exact message bytes. */
export function isSignedBy(message: string, signature: string, address: string): boolean {
  const sig = decodeSignature(signature);
  const publicKey = decodeAddress(address);
  return !!sig && !!publicKey && verifyEd25519(sig, new TextEncoder().encode(message), publicKey);
}

function verifyEd25519(sig: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return ed25519.verify(sig, message, publicKey);
  } catch {
    // Off-curve addresses (program-derived) cannot sign at all.
    return false;
  }
}

// A name with a line break must not be able to forge extra lines of the message, nor one with a
// format character (a bidi override, a zero-width space) make the line read as something else:
// names are refused with them (`lib/names.ts`), and this also covers names stored before that and
// names from the identity provider.
function oneLine(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, " ");
}

// The local playground's sandbox key: a throwaway key the dashboard sign-in page keeps in this
// browser, which signs where a wallet app would (the sign-in, a dashboard statement).
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";

/** Where the sign-in page keeps the sandbox key (base58). */
export const SANDBOX_STORAGE = "blocklink.sandboxKey";

/** The 32-byte secret of a base58 key of 32 bytes, or of 64 (as wallets export it); else null. */
export function decodeSandboxSecret(text: string | null): Uint8Array | null {
  if (!text) return null;
  try {
    const bytes = base58.decode(text.trim());
    // A 64-byte key starts with the 32-byte secret.
    if (bytes.length === 64) return bytes.slice(0, 32);
    return bytes.length === 32 ? bytes : null;
  } catch {
    return null;
  }
}

/** The wallet address of a sandbox secret. */
export function sandboxAddress(secret: Uint8Array): string {
  return base58.encode(ed25519.getPublicKey(secret));
}

/** The sandbox key's signature of `message`, as a wallet's `signMessage` makes it. */
export function signWithSandboxKey(secret: Uint8Array, message: string): Uint8Array {
  return ed25519.sign(new TextEncoder().encode(message), secret);
}

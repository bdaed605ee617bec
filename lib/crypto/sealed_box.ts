/**
 * libsodium's sealed box (`crypto_box_seal`), which Roblox's secrets API takes: a value only the
 * holder of the recipient's X25519 private key can open, from a sender with no key of its own.
 *
 * An ephemeral X25519 key pair is made per value; the nonce is BLAKE2b with a 24-byte output (a
 * 24-byte digest, not a 64-byte one cut short) over the ephemeral public key then the
 * recipient's; the box is XSalsa20-Poly1305 under HSalsa20 of the shared secret (libsodium's
 * `crypto_box_beforenm`). The result is the ephemeral public key, the 16-byte tag, then the
 * ciphertext: 48 bytes more than the value.
 */
import { x25519 } from "@noble/curves/ed25519.js";
import { blake2b } from "@noble/hashes/blake2.js";
import { hsalsa, xsalsa20poly1305 } from "@noble/ciphers/salsa.js";

const KEY_LENGTH = 32;

/** Seals `value` (UTF-8 text or bytes) for the holder of `recipientPublicKey`'s private key. */
export function sealBox(value: string | Uint8Array, recipientPublicKey: Uint8Array): Uint8Array {
  if (recipientPublicKey.length !== KEY_LENGTH) {
    throw new Error(`Cannot seal: the public key must be ${KEY_LENGTH} bytes`);
  }
  const message = typeof value === "string" ? new TextEncoder().encode(value) : value;
  const ephemeralSecret = x25519.utils.randomSecretKey();
  const ephemeralPublic = x25519.getPublicKey(ephemeralSecret);
  const nonce = blake2b(concat(ephemeralPublic, recipientPublicKey), { dkLen: 24 });
  const shared = x25519.getSharedSecret(ephemeralSecret, recipientPublicKey);
  const box = xsalsa20poly1305(boxKey(shared), nonce).encrypt(message);
  ephemeralSecret.fill(0);
  return concat(ephemeralPublic, box);
}

// libsodium's crypto_box_beforenm: HSalsa20 of the shared secret with a zero input block.
function boxKey(shared: Uint8Array): Uint8Array {
  const sigma = new Uint32Array(
    [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574],
  );
  const key = new Uint32Array(shared.buffer.slice(shared.byteOffset, shared.byteOffset + 32));
  const out = new Uint32Array(8);
  hsalsa(sigma, key, new Uint32Array(4), out);
  return new Uint8Array(out.buffer);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

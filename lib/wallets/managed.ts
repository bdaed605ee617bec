/**
 * The built-in provider: ed25519 keys generated in the service and stored only encrypted under a
 * key derived from SECRET. A decrypted key lives only as a non-extractable WebCrypto key in memory,
 * so it can sign but can never be read back or logged; the one way out is the owner's key export
 * (`exportSecretKey`), which decrypts the stored seed for that answer alone.
 */
import { ed25519 } from "@noble/curves/ed25519.js";
import { getAddressDecoder } from "@solana/kit";
import type { Clock } from "../../core/clock.ts";
import { decryptSecret, encryptSecret, type SealBinding } from "../crypto/encryption.ts";
import type { SecretKeys } from "../crypto/secret_keys.ts";
import { log } from "../../core/log.ts";
import { createWalletKey, getWalletKey } from "../../kv/wallet_keys.ts";
import { type WalletProvider, WalletUnavailableError } from "./provider.ts";

// PKCS#8 header of an Ed25519 private key (RFC 8410); the 32-byte seed follows it.
const PKCS8_ED25519_PREFIX = Uint8Array.from(
  "302e020100300506032b657004220420".match(/../g)!,
  (hex) => parseInt(hex, 16),
);
const MAX_CACHED_KEYS = 1_000;

/** What a wallet key is sealed as: a wallet key of this project. */
export function walletKeyBinding(projectId: string): SealBinding {
  return { purpose: "wallet_key", context: projectId };
}

/** Creates the managed provider over the store and the keys derived from SECRET. */
export function createManagedWalletProvider(
  deps: { kv: Deno.Kv; keys: SecretKeys; clock: Clock },
): WalletProvider {
  const signingKeys = new Map<string, Promise<CryptoKey>>();

  /** The stored seed, decrypted and checked against the wallet's address; the caller zeroes it. */
  async function openSeed(projectId: string, use: string): Promise<Uint8Array> {
    const record = await getWalletKey(deps.kv, projectId);
    if (!record) {
      throw new WalletUnavailableError(`Cannot ${use}: the project has no managed wallet`);
    }
    let seed: Uint8Array;
    try {
      seed = await decryptSecret(deps.keys, record.secretKeyEnc, walletKeyBinding(projectId));
    } catch {
      throw new WalletUnavailableError(
        `Cannot ${use}: the managed wallet key cannot be decrypted with the current SECRET`,
      );
    }
    if (getAddressDecoder().decode(ed25519.getPublicKey(seed)) !== record.address) {
      seed.fill(0);
      throw new WalletUnavailableError(
        `Cannot ${use}: the stored wallet key does not match its address`,
      );
    }
    return seed;
  }

  async function loadSigningKey(projectId: string): Promise<CryptoKey> {
    const seed = await openSeed(projectId, "sign");
    try {
      const pkcs8 = new Uint8Array(PKCS8_ED25519_PREFIX.length + 32);
      pkcs8.set(PKCS8_ED25519_PREFIX);
      pkcs8.set(seed, PKCS8_ED25519_PREFIX.length);
      const key = await crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, [
        "sign",
      ]);
      pkcs8.fill(0);
      return key;
    } finally {
      seed.fill(0);
    }
  }

  function signingKey(projectId: string): Promise<CryptoKey> {
    let key = signingKeys.get(projectId);
    if (!key) {
      if (signingKeys.size >= MAX_CACHED_KEYS) signingKeys.delete(signingKeys.keys().next().value!);
      key = loadSigningKey(projectId);
      // A failure is not cached: the next attempt reads the store again.
      key.catch(() => signingKeys.delete(projectId));
      signingKeys.set(projectId, key);
    }
    return key;
  }

  return {
    name: "managed",
    async createWallet(projectId: string): Promise<string> {
      const existing = await getWalletKey(deps.kv, projectId);
      if (existing) return existing.address;
      const seed = ed25519.utils.randomSecretKey();
      try {
        const address = getAddressDecoder().decode(ed25519.getPublicKey(seed));
        const secretKeyEnc = await encryptSecret(deps.keys, seed, walletKeyBinding(projectId));
        const { record, created } = await createWalletKey(deps.kv, projectId, {
          address,
          secretKeyEnc,
          createdAt: deps.clock.now(),
        }, { sealedUnder: deps.keys.current.id });
        if (created) log("info", "Managed wallet created", { projectId, address });
        return record.address;
      } finally {
        seed.fill(0);
      }
    },
    async getAddress(projectId: string): Promise<string | null> {
      return (await getWalletKey(deps.kv, projectId))?.address ?? null;
    },
    async signMessage(projectId: string, message: Uint8Array): Promise<Uint8Array> {
      const key = await signingKey(projectId);
      try {
        const signature = await crypto.subtle.sign(
          "Ed25519",
          key,
          message as Uint8Array<ArrayBuffer>,
        );
        return new Uint8Array(signature);
      } catch (error) {
        log("error", "Managed wallet could not sign", { projectId, error });
        throw new WalletUnavailableError("Cannot sign: the signing operation failed");
      }
    },
    async exportSecretKey(projectId: string): Promise<Uint8Array> {
      const seed = await openSeed(projectId, "export");
      const secretKey = new Uint8Array(64);
      secretKey.set(seed);
      secretKey.set(ed25519.getPublicKey(seed), 32);
      seed.fill(0);
      return secretKey;
    },
  };
}

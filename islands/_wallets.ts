// Browser wallets through the Wallet Standard: discovery, connect, and message signing.
import { getWallets } from "@wallet-standard/app";
import type { Wallet, WalletAccount } from "@wallet-standard/base";

interface ConnectFeature {
  connect(input?: { silent?: boolean }): Promise<{ accounts: readonly WalletAccount[] }>;
}
interface SignMessageFeature {
  signMessage(
    ...inputs: Array<{ account: WalletAccount; message: Uint8Array }>
  ): Promise<ReadonlyArray<{ signedMessage: Uint8Array; signature: Uint8Array }>>;
}

/** Keeps the wallets that can sign a Solana message; Phantom, Solflare, Backpack and others register here. */
export function canSignMessages(wallet: Wallet): boolean {
  return "solana:signMessage" in wallet.features && "standard:connect" in wallet.features;
}

/** Calls `onChange` now and whenever a wallet registers or unregisters; returns the unsubscribe. */
export function watchWallets(onChange: (wallets: Wallet[]) => void): () => void {
  const api = getWallets();
  const emit = () => onChange(api.get().filter(canSignMessages));
  const offRegister = api.on("register", emit);
  const offUnregister = api.on("unregister", emit);
  emit();
  return () => {
    offRegister();
    offUnregister();
  };
}

/** Asks the wallet for access and returns the account to link. */
export async function connectAccount(wallet: Wallet): Promise<WalletAccount> {
  const feature = wallet.features["standard:connect"] as ConnectFeature;
  const { accounts } = await feature.connect();
  const all = accounts.length ? accounts : wallet.accounts;
  const account = all.find((a) => a.features.includes("solana:signMessage")) ?? all[0];
  if (!account) throw new WalletFlowError("no_account");
  return account;
}

/** Has the wallet sign the exact message bytes; refuses a signature over altered bytes. */
export async function signMessage(
  wallet: Wallet,
  account: WalletAccount,
  message: string,
): Promise<Uint8Array> {
  const bytes = new TextEncoder().encode(message);
  const feature = wallet.features["solana:signMessage"] as SignMessageFeature;
  const [output] = await feature.signMessage({ account, message: bytes });
  if (!output?.signature) throw new WalletFlowError("no_signature");
  if (output.signedMessage && !sameBytes(output.signedMessage, bytes)) {
    throw new WalletFlowError("altered_message");
  }
  return output.signature;
}

/** A wallet step that failed in a way the page explains itself. */
export class WalletFlowError extends Error {
  constructor(readonly reason: "no_account" | "no_signature" | "altered_message") {
    super(reason);
    this.name = "WalletFlowError";
  }
}

/** Standard base64 of bytes, as the verify route expects. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** True when the error says the user declined in the wallet (EIP-1193 style code 4001 or wording). */
export function isUserRejection(error: unknown): boolean {
  const e = error as { code?: unknown; name?: unknown; message?: unknown } | null;
  if (!e) return false;
  if (e.code === 4001 || e.name === "UserRejectedRequestError") return true;
  return typeof e.message === "string" && /reject|declin|denied|cancel/i.test(e.message);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** The one small interface every wallet provider implements, whatever holds the keys. */

/** Names a provider reports in `/health`. */
export type WalletProviderName = "managed" | "none";

/** Holds the projects' managed wallets: creates them, tells their address and signs with them. */
export interface WalletProvider {
  /** Shown by `/health` as `wallets`. */
  readonly name: WalletProviderName;
  /** Creates the project's wallet and returns its address; returns the existing address when one exists. */
  createWallet(projectId: string): Promise<string>;
  /** The project's wallet address, or null when it has none. */
  getAddress(projectId: string): Promise<string | null>;
  /** Signs compiled transaction message bytes with the project's wallet; throws `WalletUnavailableError`. */
  signMessage(projectId: string, message: Uint8Array): Promise<Uint8Array>;
  /**
   * The wallet's 64-byte secret key (seed, then public key), for its owner's key export only
   * (`lib/projects/key_export.ts`); the caller zeroes it once encoded. Throws `WalletUnavailableError`.
   */
  exportSecretKey(projectId: string): Promise<Uint8Array>;
}

/** The wallet could not sign; its message is the provider's reason, shown in the failed attempt. */
export class WalletUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WalletUnavailableError";
  }
}

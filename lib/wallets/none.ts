/** The provider in force while managed wallets are turned off: nothing can be created or signed. */
import { ApiError } from "../../core/api_error.ts";
import { type WalletProvider, WalletUnavailableError } from "./provider.ts";

/** A provider that refuses every wallet operation. */
export function createNoWalletProvider(): WalletProvider {
  return {
    name: "none",
    createWallet(): Promise<string> {
      return Promise.reject(
        new ApiError("wallets_unavailable", "Managed wallets are not turned on"),
      );
    },
    getAddress(): Promise<string | null> {
      return Promise.resolve(null);
    },
    signMessage(): Promise<Uint8Array> {
      return Promise.reject(
        new WalletUnavailableError("Cannot sign: managed wallets are turned off"),
      );
    },
    exportSecretKey(): Promise<Uint8Array> {
      return Promise.reject(
        new WalletUnavailableError("Cannot export: managed wallets are turned off"),
      );
    },
  };
}

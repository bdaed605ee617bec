/** Picks the wallet provider named by `WALLET_PROVIDER`. */
import type { Clock } from "../../core/clock.ts";
import type { Config } from "../config.ts";
import type { SecretKeys } from "../crypto/secret_keys.ts";
import { createManagedWalletProvider } from "./managed.ts";
import { createNoWalletProvider } from "./none.ts";
import type { WalletProvider } from "./provider.ts";

export type { WalletProvider, WalletProviderName } from "./provider.ts";
export { WalletUnavailableError } from "./provider.ts";

/** Builds the configured provider once per process. */
export function createWalletProvider(
  config: Config,
  deps: { kv: Deno.Kv; keys: SecretKeys; clock: Clock },
): WalletProvider {
  return config.walletProvider === "managed"
    ? createManagedWalletProvider(deps)
    : createNoWalletProvider();
}

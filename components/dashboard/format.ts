/** How the dashboard writes times, addresses and explorer links. */
import type { Cluster } from "../../core/cluster.ts";
import { shortAddress } from "../../islands/_short_address.ts";

const PUBLIC_RPC: Record<Cluster, string> = {
  devnet: "https://api.devnet.solana.com",
  mainnet: "https://api.mainnet-beta.solana.com",
};

/** A Unix ms time as `2026-11-21 12:00 UTC` (pages render on the server, so one zone for all). */
export function formatTime(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export { shortAddress };

/**
 * The Solana Explorer's cluster query for the project's cluster. A service reading its own RPC
 * endpoint (a private node, or the local sandbox) links to the explorer's custom-cluster view of it.
 */
function clusterQuery(cluster: Cluster, rpcUrl: string): string {
  if (rpcUrl.replace(/\/+$/, "") === PUBLIC_RPC[cluster]) {
    return cluster === "devnet" ? "?cluster=devnet" : "";
  }
  const local = /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:|\/|$)/.test(rpcUrl);
  // A keyed provider URL must not be handed to a third-party site; fall back to the public view.
  if (!local) return cluster === "devnet" ? "?cluster=devnet" : "";
  return `?cluster=custom&customUrl=${encodeURIComponent(rpcUrl)}`;
}

/** Explorer page of a transaction signature on the project's cluster. */
export function explorerTxUrl(cluster: Cluster, rpcUrl: string, signature: string): string {
  return `https://explorer.solana.com/tx/${encodeURIComponent(signature)}${
    clusterQuery(cluster, rpcUrl)
  }`;
}

/** Explorer page of an address on the project's cluster. */
export function explorerAddressUrl(cluster: Cluster, rpcUrl: string, address: string): string {
  return `https://explorer.solana.com/address/${encodeURIComponent(address)}${
    clusterQuery(cluster, rpcUrl)
  }`;
}

/** What the dashboard says of a key or an endpoint from before makers were recorded. */
export const NO_MAKER = "made before makers were recorded";

/** Who made a key or an endpoint: their short address, or that it predates recording makers. */
export function madeBy(address: string | null | undefined): string {
  return address ? shortAddress(address) : NO_MAKER;
}

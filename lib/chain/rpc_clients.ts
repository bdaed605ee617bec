/** One JSON-RPC client per cluster, built from `RPC_URL_<CLUSTER>`. */
import { createSolanaRpc, type Rpc, type SolanaRpcApi } from "@solana/kit";
import type { Cluster } from "../../core/cluster.ts";
import type { Config } from "../config.ts";

/** The RPC clients of both clusters. */
export type RpcClients = Record<Cluster, Rpc<SolanaRpcApi>>;

/** Creates the clients once per process; they hold no connection state of their own. */
export function createRpcClients(config: Config): RpcClients {
  return {
    devnet: createSolanaRpc(config.rpcUrls.devnet),
    mainnet: createSolanaRpc(config.rpcUrls.mainnet),
  };
}

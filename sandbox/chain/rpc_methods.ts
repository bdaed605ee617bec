// Every RPC method the sandbox node answers; anything else is "Method not found".
import type { RpcHandler } from "./rpc_dispatch.ts";
import { accountMethods } from "./rpc_methods_accounts.ts";
import { clusterMethods } from "./rpc_methods_cluster.ts";
import { historyMethods } from "./rpc_methods_history.ts";
import { transactionMethods } from "./rpc_methods_transactions.ts";

export const rpcMethods: Record<string, RpcHandler> = {
  ...clusterMethods,
  ...accountMethods,
  ...transactionMethods,
  ...historyMethods,
};

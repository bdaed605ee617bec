// Placeholder replaced by the DAS implementation.
import type { RpcHandler } from "./rpc_dispatch.ts";

export const dasMethods: Record<string, RpcHandler> = {};

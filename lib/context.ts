/** Everything a request or job needs, built once per process and passed down explicitly. */
import { ApiKeyResolver } from "./auth/api_key_resolver.ts";
import { type Clock, systemClock } from "./clock.ts";
import type { Config } from "./config.ts";
import { deriveSecretKeys, type SecretKeys } from "./crypto/secret_keys.ts";
import { RequestQuota } from "./quota/request_quota.ts";
import { createRpcClients, type RpcClients } from "./chain/rpc_clients.ts";

/** The service's shared dependencies. */
export interface AppContext {
  kv: Deno.Kv;
  config: Config;
  clock: Clock;
  keys: SecretKeys;
  apiKeys: ApiKeyResolver;
  quota: RequestQuota;
  /** JSON-RPC clients per cluster. */
  rpc: RpcClients;
}

/** Builds the context for one process (or one test). */
export async function createAppContext(
  input: { kv: Deno.Kv; config: Config; clock?: Clock },
): Promise<AppContext> {
  const clock = input.clock ?? systemClock;
  return {
    kv: input.kv,
    config: input.config,
    clock,
    keys: await deriveSecretKeys(input.config.secret),
    apiKeys: new ApiKeyResolver(input.kv, clock),
    quota: new RequestQuota(input.kv, clock),
    rpc: createRpcClients(input.config),
  };
}

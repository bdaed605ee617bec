/**
 * The services every domain of `lib/` may use, built once per process and passed down
 * explicitly. A domain with per-process state of its own extends it (`EventContext` in
 * `lib/events/runtime.ts`, `TxContext` in `lib/tx/runtime.ts`); `lib/context.ts` puts them together
 * as the `AppContext` routes and jobs hold.
 */
import { ApiKeyResolver } from "./auth/api_key_resolver.ts";
import { type Clock, systemClock } from "../core/clock.ts";
import type { Config } from "./config.ts";
import { deriveSecretKeys, type SecretKeys } from "./crypto/secret_keys.ts";
import { RequestQuota } from "./quota/request_quota.ts";
import { AbuseLimiter } from "./quota/abuse_limits.ts";
import { RequestLog } from "./quota/request_log.ts";
import { FeedReadLimit } from "./quota/feed_reads.ts";
import { createRpcClients, type RpcClients } from "./chain/rpc_clients.ts";
import { ChainReads } from "./chain/reads.ts";
import { TtlCache } from "../core/ttl_cache.ts";
import { createWalletProvider, type WalletProvider } from "./wallets/mod.ts";
import { JobWaker } from "../core/job_waker.ts";
import { isRemoteKvPath } from "../kv/open_kv.ts";

/** The process's shared services. */
export interface BaseContext {
  kv: Deno.Kv;
  config: Config;
  clock: Clock;
  keys: SecretKeys;
  apiKeys: ApiKeyResolver;
  quota: RequestQuota;
  /** Per-client caps on actions that need no API key (issue 12). */
  abuse: AbuseLimiter;
  /** The event feed's own per-instance limit (feed reads are not counted toward the quotas). */
  feedReads: FeedReadLimit;
  /** The `/v1` calls' log, written per turn (`lib/quota/request_log.ts`). */
  requestLog: RequestLog;
  /** JSON-RPC clients per cluster. */
  rpc: RpcClients;
  /** Wakes this process's job workers when new work is due. */
  jobWaker: JobWaker;
  /** Holds the projects' managed wallets (`none` while they are turned off). */
  wallets: WalletProvider;
  /** Cached chain reads of the game API (balances, tokens, assets, signature status). */
  chain: ChainReads;
}

// A token's symbol and decimals rarely change; pages read them from this cache for 10 minutes.
const TOKEN_LABEL_TTL_MS = 10 * 60_000;

/** Builds the services of one process (or one test). */
export async function createBaseContext(
  input: { kv: Deno.Kv; config: Config; clock?: Clock },
): Promise<BaseContext> {
  const clock = input.clock ?? systemClock;
  const keys = await deriveSecretKeys(input.config.secret, {
    previous: input.config.secretPrevious,
    next: input.config.secretNext,
  });
  const rpc = createRpcClients(input.config);
  const remote = isRemoteKvPath(input.config.kvPath);
  return {
    kv: input.kv,
    config: input.config,
    clock,
    keys,
    apiKeys: new ApiKeyResolver(input.kv, clock),
    quota: new RequestQuota(input.kv, clock, { remote }),
    abuse: new AbuseLimiter(input.kv, clock, {
      limits: input.config.abuseLimits,
    }),
    feedReads: new FeedReadLimit(clock),
    requestLog: new RequestLog(input.kv),
    rpc,
    jobWaker: new JobWaker(),
    wallets: createWalletProvider(input.config, { kv: input.kv, keys, clock }),
    chain: new ChainReads(
      rpc,
      { rpc: input.config.rpcUrls, das: input.config.dasUrls },
      new TtlCache(clock),
      new TtlCache(clock, { ttlMs: TOKEN_LABEL_TTL_MS }),
    ),
  };
}

/** The game API's chain reads on a project's cluster: cached balances and assets, live signatures. */
import { type Address, isSolanaError, type Signature } from "@solana/kit";
import type { Cluster } from "../../core/cluster.ts";
import { ApiError } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import { type Asset, MAX_ASSETS } from "./assets.ts";
import { DasError, fetchAssetsFromDas } from "./assets_das.ts";
import { fetchAssetsFromChain } from "./assets_onchain.ts";
import type { TtlCache } from "../../core/ttl_cache.ts";
import type { RpcClients } from "./rpc_clients.ts";
import { fetchSignatureStatus, type SignatureStatus } from "./signature_status.ts";
import { fetchSolBalance, type SolBalance } from "./sol_balance.ts";
import {
  type ChainSource,
  fetchTokenBalanceOfMint,
  fetchTokenBalances,
  type TokenBalance,
} from "./token_balances.ts";
import { ReadBudget, ReadBudgetError, RpcCallError } from "./read_budget.ts";
import { fetchTokenLabel, type TokenLabel } from "./token_labels.ts";

/** A read that takes longer than this fails rather than holding the game server's request. */
const READ_TIMEOUT_MS = 10_000;

/** Chain reads with the read cache in front; RPC failures become 500 `internal` without details. */
export class ChainReads {
  constructor(
    private rpc: RpcClients,
    private urls: { rpc: Record<Cluster, string>; das: Record<Cluster, string | undefined> },
    private cache: TtlCache,
    /** Token labels change rarely: kept longer than balances (see `base_context.ts`). */
    private labels: TtlCache,
  ) {}

  #source(cluster: Cluster): ChainSource {
    return { rpc: this.rpc[cluster], url: this.urls.rpc[cluster] };
  }

  /** SOL balance of `owner`, cached about 10 s. */
  getSolBalance(cluster: Cluster, owner: Address): Promise<SolBalance> {
    return this.#cached(
      `${cluster}:balance:${owner}`,
      (signal) => fetchSolBalance(this.rpc[cluster], owner, { abortSignal: signal }),
    );
  }

  /** Forgets the cached SOL balance of `owner`, so the next read sees a change made here. */
  forgetSolBalance(cluster: Cluster, owner: Address): void {
    this.cache.delete(`${cluster}:balance:${owner}`);
  }

  /** Token balances of `owner` (one mint when given; null when that mint is not a token mint). */
  getTokenBalances(
    cluster: Cluster,
    owner: Address,
    mint?: Address,
  ): Promise<TokenBalance[] | null> {
    const source = this.#source(cluster);
    return this.#cached(`${cluster}:tokens:${owner}:${mint ?? ""}`, async (signal) => {
      const options = { budget: new ReadBudget(), abortSignal: signal };
      if (!mint) return await fetchTokenBalances(source, owner, options);
      const entry = await fetchTokenBalanceOfMint(source, owner, mint, options);
      return entry && [entry];
    });
  }

  /** What a page calls `mint` (symbol, name, decimals); null when it is not a token mint. */
  getTokenLabel(cluster: Cluster, mint: Address): Promise<TokenLabel | null> {
    return this.labels.get(
      `${cluster}:label:${mint}`,
      () =>
        guarded(
          `${cluster}:label`,
          (signal) => fetchTokenLabel(this.rpc[cluster], mint, { abortSignal: signal }),
        ),
    );
  }

  /** NFTs of `owner` (only in `collection` when given), through DAS when configured. */
  getAssets(cluster: Cluster, owner: Address, collection?: Address): Promise<Asset[]> {
    const dasUrl = this.urls.das[cluster];
    return this.#cached(`${cluster}:assets:${owner}:${collection ?? ""}`, (signal) => {
      const budget = new ReadBudget();
      const options = {
        ...(collection ? { collection } : {}),
        limit: MAX_ASSETS,
        budget,
        abortSignal: signal,
      };
      return dasUrl
        ? fetchAssetsFromDas(dasUrl, owner, options)
        : fetchAssetsFromChain(this.#source(cluster), owner, options);
    });
  }

  /** Status of one signature; never cached, since it changes from slot to slot. */
  getSignatureStatus(cluster: Cluster, signature: Signature): Promise<SignatureStatus> {
    return guarded(
      `${cluster}:signature`,
      (signal) => fetchSignatureStatus(this.rpc[cluster], signature, { abortSignal: signal }),
    );
  }

  #cached<T>(key: string, load: (signal: AbortSignal) => Promise<T>): Promise<T> {
    return this.cache.get(key, () => guarded(key, load));
  }
}

async function guarded<T>(what: string, load: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), READ_TIMEOUT_MS);
  try {
    return await load(controller.signal);
  } catch (e) {
    if (e instanceof ReadBudgetError) throw new ApiError("read_budget_exceeded", e.message);
    // RPC URLs may carry a provider key: log only what kind of failure it was, answer nothing more.
    log("warn", "Chain read failed", { read: what.split(":").slice(0, 2).join(":"), ...cause(e) });
    throw new ApiError("internal", "Could not read from the chain");
  } finally {
    clearTimeout(timer);
  }
}

function cause(e: unknown): Record<string, unknown> {
  if (isSolanaError(e)) return { errorCode: e.context.__code };
  if (e instanceof DasError) return { error: e.message };
  if (e instanceof RpcCallError) return { error: e.message, errorCode: e.code };
  if (e instanceof DOMException && e.name === "AbortError") return { error: "timeout" };
  return { error: e instanceof Error ? e.name : typeof e };
}

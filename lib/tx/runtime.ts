/** Per-process state of the transaction routes, held in the app context. */
import type { Address, Blockhash } from "@solana/kit";
import type { Cluster } from "../../core/cluster.ts";
import type { MintInfo } from "../chain/mints.ts";
import { defaultTxTiming, type TxTiming } from "./timing.ts";

// A mint's program and decimals never change, so a found mint can be remembered for a while;
// a missing one is not remembered, so a mint created a moment ago is seen at once.
const MINT_TTL_MS = 10 * 60_000;
const MINT_CACHE_MAX = 10_000;

/** Remembers mints found on each cluster. */
export class MintCache {
  #entries = new Map<string, { mint: MintInfo; until: number }>();

  /** The cached mint, or null when unknown or stale. */
  get(cluster: Cluster, mint: Address, now: number): MintInfo | null {
    const entry = this.#entries.get(`${cluster}:${mint}`);
    return entry && entry.until > now ? entry.mint : null;
  }

  /** Remembers a mint that exists. */
  set(cluster: Cluster, mint: MintInfo, now: number): void {
    if (this.#entries.size >= MINT_CACHE_MAX) this.#entries.clear();
    this.#entries.set(`${cluster}:${mint.address}`, { mint, until: now + MINT_TTL_MS });
  }
}

/** A recent blockhash, the last block height it can land at, and the slot of its block. */
export interface LatestBlockhash {
  blockhash: Blockhash;
  lastValidBlockHeight: bigint;
  slot: bigint;
}

// A blockhash stays usable for 150 blocks (about a minute); reusing one for a second costs the
// transaction under 3 of them and saves an RPC round trip per request under load.
const BLOCKHASH_TTL_MS = 1_000;

/** Shares one `getLatestBlockhash` per cluster per second among concurrent requests. */
export class BlockhashCache {
  #entries = new Map<Cluster, { value: Promise<LatestBlockhash>; at: number }>();

  /** A blockhash fetched less than a second ago, or a fresh one from `fetch`. */
  get(cluster: Cluster, fetch: () => Promise<LatestBlockhash>): Promise<LatestBlockhash> {
    const entry = this.#entries.get(cluster);
    if (entry && performance.now() - entry.at < BLOCKHASH_TTL_MS) return entry.value;
    const value = fetch();
    const fresh = { value, at: performance.now() };
    this.#entries.set(cluster, fresh);
    // A failure is not shared with later requests.
    value.catch(() => {
      if (this.#entries.get(cluster) === fresh) this.#entries.delete(cluster);
    });
    return value;
  }

  /** Forgets the cached blockhashes (tests that move the cluster's slots by hand). */
  clear(): void {
    this.#entries.clear();
  }
}

/** Runs tasks one at a time per key within this process (other instances are handled by KV checks). */
export class KeyedLock {
  #tails = new Map<string, Promise<void>>();

  /** Runs `task` after every earlier task of `key` has finished. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const current = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => current);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }
}

/** The transaction routes' per-process state. */
export interface TxRuntime {
  timing: TxTiming;
  mints: MintCache;
  /** Serialises reservations per project in this process, so they do not collide in KV. */
  reservations: KeyedLock;
  blockhashes: BlockhashCache;
}

/** Builds the runtime with the spec's timing. */
export function createTxRuntime(): TxRuntime {
  return {
    timing: defaultTxTiming(),
    mints: new MintCache(),
    reservations: new KeyedLock(),
    blockhashes: new BlockhashCache(),
  };
}

/** Per-process state of the transaction routes, held in the app context. */
import type { Address } from "@solana/kit";
import type { Cluster } from "../config.ts";
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
}

/** Builds the runtime with the spec's timing. */
export function createTxRuntime(): TxRuntime {
  return { timing: defaultTxTiming(), mints: new MintCache(), reservations: new KeyedLock() };
}

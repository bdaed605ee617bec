/** A short per-instance cache for chain reads: identical concurrent misses share one load. */
import type { Clock } from "../clock.ts";

/** How long a chain read is served from memory (the spec's "about 10 seconds"). */
export const READ_CACHE_TTL_MS = 10_000;

const MAX_ENTRIES = 10_000;

interface Entry {
  value: unknown;
  storedAt: number;
}

/** Caches successful loads for `ttlMs` on the injected clock; failures are never kept. */
export class ReadCache {
  #entries = new Map<string, Entry>();
  #loading = new Map<string, Promise<unknown>>();
  #ttlMs: number;

  constructor(private clock: Clock, options: { ttlMs?: number } = {}) {
    this.#ttlMs = options.ttlMs ?? READ_CACHE_TTL_MS;
  }

  /** The cached value for `key`, or the result of `load()`, shared by every caller meanwhile. */
  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    const entry = this.#entries.get(key);
    if (entry && this.clock.now() - entry.storedAt < this.#ttlMs) return entry.value as T;
    let loading = this.#loading.get(key) as Promise<T> | undefined;
    if (!loading) {
      loading = this.#load(key, load);
      this.#loading.set(key, loading);
    }
    return await loading;
  }

  /** Number of entries held, fresh or not. */
  get size(): number {
    return this.#entries.size;
  }

  async #load<T>(key: string, load: () => Promise<T>): Promise<T> {
    try {
      const value = await load();
      this.#store(key, value);
      return value;
    } finally {
      this.#loading.delete(key);
    }
  }

  #store(key: string, value: unknown): void {
    const now = this.clock.now();
    this.#entries.delete(key);
    if (this.#entries.size >= MAX_ENTRIES) this.#evict(now);
    this.#entries.set(key, { value, storedAt: now });
  }

  // Expired entries go first; if all are fresh, the oldest insertion goes.
  #evict(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (now - entry.storedAt >= this.#ttlMs) this.#entries.delete(key);
    }
    if (this.#entries.size >= MAX_ENTRIES) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }
}

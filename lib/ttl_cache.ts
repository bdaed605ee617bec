/** A short per-instance cache: identical concurrent misses share one load, failures are never kept. */
import type { Clock } from "./clock.ts";

/** Default lifetime of an entry (the spec's "about 10 seconds" for reads). */
export const DEFAULT_TTL_MS = 10_000;

const MAX_ENTRIES = 10_000;

interface Entry<V> {
  value: V;
  /** When its load started, so an entry is never older than it claims. */
  loadedAt: number;
}

/** Caches successful loads for `ttlMs` on the injected clock. */
export class TtlCache<V = unknown> {
  #entries = new Map<string, Entry<V>>();
  #loading = new Map<string, Promise<V>>();
  // Bumped by every invalidation, so a load that began before one is not stored.
  #epoch = 0;
  #ttlMs: number;

  constructor(private clock: Clock, options: { ttlMs?: number } = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
  }

  /** The cached value for `key`, or the result of `load()`, shared by every caller meanwhile. */
  async get<T extends V>(key: string, load: () => Promise<T>): Promise<T> {
    const entry = this.#entries.get(key);
    if (entry && this.clock.now() - entry.loadedAt < this.#ttlMs) return entry.value as T;
    let loading = this.#loading.get(key) as Promise<T> | undefined;
    if (!loading) {
      loading = this.#load(key, load);
      this.#loading.set(key, loading);
    }
    return await loading;
  }

  /** Drops one key, so the next read loads afresh. */
  delete(key: string): void {
    this.#invalidate();
    this.#entries.delete(key);
  }

  /** Drops every entry whose value matches, so the next reads load afresh. */
  deleteWhere(matches: (value: V) => boolean): void {
    this.#invalidate();
    for (const [key, entry] of this.#entries) if (matches(entry.value)) this.#entries.delete(key);
  }

  /** Number of entries held, fresh or not. */
  get size(): number {
    return this.#entries.size;
  }

  #invalidate(): void {
    this.#epoch++;
    this.#loading.clear();
  }

  async #load<T extends V>(key: string, load: () => Promise<T>): Promise<T> {
    const loadedAt = this.clock.now();
    const epoch = this.#epoch;
    try {
      const value = await load();
      if (epoch === this.#epoch) this.#store(key, { value, loadedAt });
      return value;
    } finally {
      if (epoch === this.#epoch) this.#loading.delete(key);
    }
  }

  #store(key: string, entry: Entry<V>): void {
    const now = this.clock.now();
    this.#entries.delete(key);
    if (this.#entries.size >= MAX_ENTRIES) this.#evict(now);
    this.#entries.set(key, entry);
  }

  // Expired entries go first; if all are fresh, the oldest insertion goes.
  #evict(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (now - entry.loadedAt >= this.#ttlMs) this.#entries.delete(key);
    }
    if (this.#entries.size >= MAX_ENTRIES) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }
}

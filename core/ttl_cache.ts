/**
 * A short per-instance cache: identical concurrent misses share one load, failures are never kept.
 * It is bounded twice: by entry count and by an estimate of the bytes its values hold (a read of a
 * huge wallet must not pin megabytes), evicting oldest first; expired entries leave as soon as the
 * cache is next touched, not only when it is full. With `refreshAfterMs`, an entry read past that
 * age is answered as held and loaded again behind the answer, so a key read steadily never waits
 * for its load, and no answer is older than `ttlMs` all the same.
 */
import type { Clock } from "./clock.ts";
import { estimateBytes } from "./estimate_bytes.ts";

/** Default lifetime of an entry (the spec's "about 10 seconds" for reads). */
const DEFAULT_TTL_MS = 10_000;

const MAX_ENTRIES = 10_000;
// Default byte budget of one cache.
const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;

interface Entry<V> {
  value: V;
  /** When its load started, so an entry is never older than it claims. */
  loadedAt: number;
  /** Estimated size of `value`. */
  bytes: number;
}

/** Caches successful loads for `ttlMs` on the injected clock. */
export class TtlCache<V = unknown> {
  #entries = new Map<string, Entry<V>>();
  #loading = new Map<string, Promise<V>>();
  // Bumped by every invalidation, so a load that began before one is not stored.
  #epoch = 0;
  #ttlMs: number;
  #maxBytes: number;
  #refreshAfterMs: number;
  #bytes = 0;

  constructor(
    private clock: Clock,
    options: { ttlMs?: number; maxBytes?: number; refreshAfterMs?: number } = {},
  ) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_TTL_MS;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#refreshAfterMs = options.refreshAfterMs ?? this.#ttlMs;
  }

  /** The cached value for `key`, or the result of `load()`, shared by every caller meanwhile. */
  async get<T extends V>(key: string, load: () => Promise<T>): Promise<T> {
    const entry = this.#entries.get(key);
    const age = entry ? this.clock.now() - entry.loadedAt : Infinity;
    if (age < this.#ttlMs) {
      if (age >= this.#refreshAfterMs && !this.#loading.has(key)) {
        const refresh = this.#load(key, load);
        this.#loading.set(key, refresh);
        // A failed refresh leaves the entry held until it expires.
        refresh.catch(() => {});
      }
      return entry!.value as T;
    }
    this.#dropExpired(this.clock.now());
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
    this.#remove(key);
  }

  /** Drops every entry whose value matches, so the next reads load afresh. */
  deleteWhere(matches: (value: V) => boolean): void {
    this.#invalidate();
    for (const [key, entry] of this.#entries) if (matches(entry.value)) this.#remove(key);
  }

  /** Number of entries held, fresh or not. */
  get size(): number {
    return this.#entries.size;
  }

  /** Estimated bytes held by the values. */
  get bytes(): number {
    return this.#bytes;
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
      if (epoch === this.#epoch) this.#store(key, { value, loadedAt, bytes: estimateBytes(value) });
      return value;
    } finally {
      if (epoch === this.#epoch) this.#loading.delete(key);
    }
  }

  #store(key: string, entry: Entry<V>): void {
    this.#remove(key);
    // A value larger than the whole budget is answered but not kept.
    if (entry.bytes > this.#maxBytes) return;
    this.#dropExpired(this.clock.now());
    while (
      this.#entries.size > 0 &&
      (this.#entries.size >= MAX_ENTRIES || this.#bytes + entry.bytes > this.#maxBytes)
    ) {
      this.#remove(this.#entries.keys().next().value!);
    }
    this.#entries.set(key, entry);
    this.#bytes += entry.bytes;
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  // Entries sit in the order they were stored, so the expired ones are at the front.
  #dropExpired(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (now - entry.loadedAt < this.#ttlMs) return;
      this.#remove(key);
    }
  }
}

/**
 * Point reads in batches, for a local store file: a `BatchedReads` gathers every `get` asked of it
 * during one turn of the event loop and reads them when the turn's callbacks are done
 * (`setImmediate`: no timer, no added wait), with one `getMany` per ten keys. Each store call has
 * a fixed cost well above the cost of a key (the op, the hand-over to the store's SQLite thread,
 * its read transaction), so under load, when many requests read at once, a batch of ten keys costs
 * little more than one key, and the hot `/v1` route spends about 40 % less CPU per request
 * (docs/performance.md). A lone read goes out alone, at the end of its turn.
 *
 * A batch reads every key in one consistent snapshot taken after each of its reads was asked for,
 * so a read sees every write that committed before it was asked, as a lone read does. A batch that
 * fails (one bad key fails the whole `getMany`) is read again key by key, so each read gets its
 * own answer or error.
 *
 * The reads it serves are named where they happen: the context's `reads` (`lib/base_context.ts`),
 * passed to the read functions of the request paths (`KvReader`).
 */
import { setImmediate } from "node:timers";
import { KEYS_PER_CALL } from "./get_many.ts";

/** What a point read takes: the store itself, or its reads in batches. */
export interface KvReader {
  get<T = unknown>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>>;
  /**
   * Up to ten keys. Batched, they may be read in more than one snapshot: for the money path's
   * reads, whose commits check what they read.
   */
  getMany<T extends readonly unknown[]>(
    keys: readonly [...{ [K in keyof T]: Deno.KvKey }],
  ): Promise<{ [K in keyof T]: Deno.KvEntryMaybe<T[K]> }>;
}

interface PendingRead {
  key: Deno.KvKey;
  resolve(entry: Deno.KvEntryMaybe<unknown>): void;
  reject(error: unknown): void;
}

/** A store's point reads, gathered per turn of the event loop into `getMany` calls. */
export class BatchedReads implements KvReader {
  #kv: Deno.Kv;
  #pending: PendingRead[] = [];

  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /** Reads `key` with the other reads of this turn. */
  get<T = unknown>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>> {
    return new Promise<Deno.KvEntryMaybe<T>>((resolve, reject) => {
      if (this.#pending.length === 0) setImmediate(() => this.#flush());
      this.#pending.push({
        key,
        resolve: resolve as PendingRead["resolve"],
        reject,
      });
    });
  }

  /**
   * Reads `keys` with the other reads of this turn, each as a point read: the batches they fall
   * in may be read in different snapshots.
   */
  getMany<T extends readonly unknown[]>(
    keys: readonly [...{ [K in keyof T]: Deno.KvKey }],
  ): Promise<{ [K in keyof T]: Deno.KvEntryMaybe<T[K]> }> {
    return Promise.all(keys.map((key) => this.get(key))) as Promise<
      { [K in keyof T]: Deno.KvEntryMaybe<T[K]> }
    >;
  }

  #readAlone(read: PendingRead): void {
    this.#kv.get(read.key).then(read.resolve, read.reject);
  }

  #flush(): void {
    const reads = this.#pending;
    this.#pending = [];
    for (let start = 0; start < reads.length; start += KEYS_PER_CALL) {
      const batch = reads.slice(start, start + KEYS_PER_CALL);
      if (batch.length === 1) {
        this.#readAlone(batch[0] as PendingRead);
        continue;
      }
      this.#kv.getMany(batch.map((read) => read.key)).then(
        (entries) =>
          batch.forEach((read, i) => read.resolve(entries[i] as Deno.KvEntryMaybe<unknown>)),
        () => batch.forEach((read) => this.#readAlone(read)),
      );
    }
  }
}

/**
 * The point reader of the request paths: batched on a local store file; over KV Connect the store
 * itself (there, under load, batched reads answered later than lone ones: the remote bench's p50
 * went from about 16 to 24 ms, docs/performance.md).
 */
export function requestReader(kv: Deno.Kv, options: { remote: boolean }): KvReader {
  return options.remote ? kv : new BatchedReads(kv);
}

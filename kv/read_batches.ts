/**
 * What a point read takes: the store handle (`Deno.Kv`), which every path reads through as it is,
 * on every store. The read functions of the request paths take this narrow view of it.
 */

/** What a point read takes. */
export interface KvReader {
  get<T = unknown>(key: Deno.KvKey): Promise<Deno.KvEntryMaybe<T>>;
  /** Up to ten keys, in one snapshot. */
  getMany<T extends readonly unknown[]>(
    keys: readonly [...{ [K in keyof T]: Deno.KvKey }],
  ): Promise<{ [K in keyof T]: Deno.KvEntryMaybe<T[K]> }>;
}

/**
 * The request quota's counters (`lib/quota/quota_store.ts`) as this instance last read them or its
 * own commits last wrote them, with their versionstamps: a quota round commits against them without
 * a read, so one changed meanwhile (by another instance) fails that commit, and the round forgets
 * it and reads again. Payouts no longer use them: each reads its records.
 *
 * A key is known once a round read or wrote it (`remember`). Values are copied in, frozen, and
 * handed out as they are: a caller may change the object it read or wrote, never the one kept, and
 * one that tries to change a known value fails at once. Bounded by keys and by bytes: the least recently used give way.
 */
import { keyId } from "./key_ids.ts";
import { estimateBytes } from "../core/estimate_bytes.ts";

// One record per project: room for the 40,000 most recently counted projects.
const MAX_KEYS = 40_000;
// A bound on the heap they take, whatever a project's counters grow to.
const MAX_BYTES = 32 * 1024 * 1024;

interface Known {
  entry: Deno.KvEntryMaybe<unknown>;
  bytes: number;
}

/** The known entries of one process. */
export class KnownEntries {
  #entries = new Map<string, Known>();
  #bytes = 0;

  constructor(
    private bounds: { keys: number; bytes: number } = { keys: MAX_KEYS, bytes: MAX_BYTES },
  ) {}

  /** The entries of `keys` (values frozen), in order, or null when one of them is not known. */
  entries(keys: readonly Deno.KvKey[]): Deno.KvEntryMaybe<unknown>[] | null {
    const found: Deno.KvEntryMaybe<unknown>[] = [];
    for (const key of keys) {
      const id = keyId(key);
      const known = this.#entries.get(id);
      if (!known) return null;
      // Most recently used last, so the oldest give way first.
      this.#entries.delete(id);
      this.#entries.set(id, known);
      found.push(known.entry);
    }
    return found;
  }

  /** Keeps entries as read, unless a newer version of one is known already. */
  remember(entries: readonly Deno.KvEntryMaybe<unknown>[]): void {
    for (const entry of entries) {
      const id = keyId(entry.key);
      const known = this.#entries.get(id)?.entry;
      if (known?.versionstamp && (entry.versionstamp ?? "") < known.versionstamp) continue;
      this.#keep(id, entry);
    }
  }

  /** Forgets `keys`: the next payout reads them. */
  forget(keys: readonly Deno.KvKey[]): void {
    for (const key of keys) this.#remove(keyId(key));
  }

  #keep(id: string, entry: Deno.KvEntryMaybe<unknown>): void {
    this.#remove(id);
    const value = frozenCopy(entry.value);
    const bytes = estimateBytes(value);
    this.#entries.set(id, { entry: { ...entry, value } as Deno.KvEntryMaybe<unknown>, bytes });
    this.#bytes += bytes;
    while (this.#entries.size > this.bounds.keys || this.#bytes > this.bounds.bytes) {
      this.#remove(this.#entries.keys().next().value!);
    }
  }

  #remove(id: string): void {
    const known = this.#entries.get(id);
    if (!known) return;
    this.#entries.delete(id);
    this.#bytes -= known.bytes;
  }
}

/**
 * A frozen deep copy of `value`, made as it is walked: plain objects and arrays (what records are)
 * are copied by hand, anything else (a `Deno.KvU64`, a typed array) is cloned whole. A structured
 * clone of the whole value, then frozen, took two to three times as long, on every payout's commit.
 */
function frozenCopy<T>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T;
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) {
    return deepFreeze(structuredClone(value));
  }
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) copy[key] = frozenCopy(inner);
  return Object.freeze(copy) as T;
}

/** `value` with every object and array in it frozen (byte arrays cannot be, and are left as is). */
function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || ArrayBuffer.isView(value)) return value;
  for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
}

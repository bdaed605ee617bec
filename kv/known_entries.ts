/**
 * The records a payout reads that rarely change between two payouts of one project (its project,
 * API key, policy, the player's link, its limits' windows and ledgers, its request counters), as
 * this instance last read them or its own commits last wrote them, with their versionstamps. A
 * payout of a project seen before may make its checks and its reservation from them, without a
 * read (`lib/tx/handle_request.ts`).
 *
 * Exactness does not rest on them being current: the reservation's commit is checked against every
 * one of them, so one changed meanwhile (by another instance, or by a write not made through the
 * commit groups) fails that commit, and the payout forgets them and starts again from fresh reads;
 * a refusal is never answered from them either. They only save reads when nothing changed.
 *
 * A key is known once a payout read it (`remember`); from then on the commits of the money path
 * (`commit_groups.ts`) keep it as they write it (`committed`). Values are copied in, frozen, and
 * handed out as they are (a copy out cost more than the read it saves: a fenced day list is 17 KB):
 * a caller may change the object it read or wrote, never the one kept, and one that tries to change
 * a known value fails at once. Bounded by keys and by bytes: the least recently used give way.
 */
import { keyId } from "./key_ids.ts";
import { ApiError } from "../core/api_error.ts";
import { estimateBytes } from "../core/estimate_bytes.ts";

// About 20 records per project: room for the 2,000 most recently paying projects.
const MAX_KEYS = 40_000;
// A project's records take about 32 KB as the heap holds them (its fenced day list most of it):
// some 1,000 projects' worth.
const MAX_BYTES = 32 * 1024 * 1024;

interface Known {
  entry: Deno.KvEntryMaybe<unknown>;
  bytes: number;
}

/** The known entries of one process, on a local store file. */
export class KnownEntries {
  #entries = new Map<string, Known>();
  #bytes = 0;
  // Payouts on their way to their reservation, per group.
  #busy = new Map<string, number>();

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

  /** A commit applied with `versionstamp`: the known keys it wrote are kept as written. */
  committed(mutations: readonly Deno.KvMutation[], versionstamp: string): void {
    for (const mutation of mutations) {
      const id = keyId(mutation.key);
      if (!this.#entries.has(id)) continue;
      if (mutation.type === "set") {
        this.#keep(id, { key: mutation.key, value: mutation.value, versionstamp });
      } else {
        // A deletion, or a sum whose result the commit does not say: read again when needed.
        this.#remove(id);
      }
    }
  }

  /**
   * A payout of `group` (its project) on its way to its reservation, guessing from the known
   * entries; `alone` unless another of the group's is on its way too, whose commit may change the
   * records payouts write (the limits') under it. `done` once it reserved or was refused (more than
   * once is harmless).
   */
  begin(group: string): { guess: KnownGuess; done(): void } {
    const busy = this.#busy.get(group) ?? 0;
    this.#busy.set(group, busy + 1);
    let done = false;
    return {
      guess: new KnownGuess(this, { alone: busy === 0 }),
      done: () => {
        if (done) return;
        done = true;
        const left = this.#busy.get(group)! - 1;
        if (left === 0) this.#busy.delete(group);
        else this.#busy.set(group, left);
      },
    };
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
 * The reservation of a payout guessed from known entries would not stand: one of them changed, or
 * the payout was refused by them (a refusal is only answered from fresh reads). Thrown before
 * anything was written; the payout starts again from fresh reads.
 */
export class WrongGuess extends Error {
  constructor() {
    super("The known entries were not current");
    this.name = "WrongGuess";
  }
}

/** One payout's use of the known entries. */
export class KnownGuess {
  #keys: Deno.KvKey[] = [];
  /** No other payout of the group was on its way when this one began. */
  readonly alone: boolean;

  constructor(private known: KnownEntries, options: { alone: boolean }) {
    this.alone = options.alone;
  }

  /** As `KnownEntries.entries`; remembered, so that `wrong` forgets them. */
  entries(keys: readonly Deno.KvKey[]): Deno.KvEntryMaybe<unknown>[] | null {
    const found = this.known.entries(keys);
    if (found) this.#keys.push(...keys);
    return found;
  }

  /**
   * What a payout that failed with `error` while resting on these entries throws: for a refusal
   * (an `ApiError`, which may come from an old entry, and only fresh reads may answer), `wrong()`;
   * anything else as it is.
   */
  rethrown(error: unknown): unknown {
    return error instanceof ApiError ? this.wrong() : error;
  }

  /** The guess was wrong: its entries are forgotten (read afresh next time); throw the answer. */
  wrong(): WrongGuess {
    this.known.forget(this.#keys);
    return new WrongGuess();
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

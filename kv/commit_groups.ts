/**
 * Commits of the request paths, gathered into groups on a local store file: every commit asked for
 * while one is in flight goes out with the others in one atomic commit, so a burst of payouts (each
 * one's reservation, its `submitted` mark, its project's limits round) pays the store's fixed cost
 * per commit (the hand-over to its one SQLite thread, the write-ahead log's sync) once per group
 * instead of once per commit. A lone commit goes out at once, as before.
 *
 * Each commit keeps its meaning: its checks and mutations are applied all together or not at all,
 * since a group applies or fails whole. Two commits that touch one key (checked or written) never
 * share a group: in one commit the second would be checked against the value before the first's
 * write, and one of the writes lost; the later waits for the next group, where its check sees the
 * first's write, as two commits one after the other would. The store does not say which check
 * failed a group: the keys its commits checked are read, each commit whose check no longer holds is
 * answered as having lost it (alone it would lose it too: a versionstamp only moves on), and the
 * others go out again as a group. So a payout that lost to another's write costs its group one read
 * and one commit more, not a commit for each of the group's payouts, which on a disk is a sync each
 * (docs/performance.md). A group refused whole (a value too large), or failing again after
 * `REGROUPS`, is split: each commit is made alone and answered for itself.
 *
 * A remote store (KV Connect) takes at most 10 checks a commit and pays a round trip per commit
 * that runs side by side with others; its commits are made alone.
 */

import { oncePerTurn } from "../core/once_per_turn.ts";
import { keyId } from "./key_ids.ts";
import { getManyInTens } from "./get_many.ts";
import type { KnownEntries } from "./known_entries.ts";

/** Hands out atomic operations whose commits are gathered into groups where it pays. */
export interface KvCommitter {
  atomic(): Deno.AtomicOperation;
}

/** Groups' bounds on a local file: the store's limits per commit are 100 checks, 1,000 mutations. */
const MAX_CHECKS = 100;
const MAX_MUTATIONS = 1_000;
// Groups in flight at once: commits queue for one disk, so more would only queue there.
const IN_FLIGHT = 2;
// Times a failed group's commits whose checks still hold go out again together before each is made
// alone: another writer may keep changing what they checked (another instance on the file).
const REGROUPS = 3;

/**
 * The committer of `kv`: grouped commits on a local file, plain ones on a remote store. `known`:
 * the quota's known counters, kept as the commits write them (`known_entries.ts`).
 */
export function commitGroups(
  kv: Deno.Kv,
  options: { remote: boolean; known?: KnownEntries | null },
): KvCommitter {
  if (options.remote) return { atomic: () => kv.atomic() };
  return new CommitGroups(kv, options.known ?? null);
}

interface Pending {
  checks: Deno.AtomicCheck[];
  mutations: Deno.KvMutation[];
  keys: Set<string>;
  resolve(result: Deno.KvCommitResult | Deno.KvCommitError): void;
  reject(error: unknown): void;
}

class CommitGroups implements KvCommitter {
  #queue: Pending[] = [];
  #inFlight = 0;
  // Commits asked for in the same turn join one group.
  #schedule = oncePerTurn(() => this.#flush());

  constructor(private kv: Deno.Kv, private known: KnownEntries | null) {}

  atomic(): Deno.AtomicOperation {
    return new GroupedOperation((pending) => {
      this.#queue.push(pending);
      this.#schedule();
    });
  }

  #flush(): void {
    while (this.#inFlight < IN_FLIGHT && this.#queue.length > 0) {
      const group = this.#take();
      this.#inFlight++;
      this.#commit(group).finally(() => {
        this.#inFlight--;
        this.#flush();
      });
    }
  }

  /** The first queued commit and every later one that fits beside it, in order. */
  #take(): Pending[] {
    const group: Pending[] = [];
    const keys = new Set<string>();
    let checks = 0;
    let mutations = 0;
    const rest: Pending[] = [];
    for (const pending of this.#queue) {
      const fits = group.length === 0 ||
        (checks + pending.checks.length <= MAX_CHECKS &&
          mutations + pending.mutations.length <= MAX_MUTATIONS &&
          ![...pending.keys].some((key) => keys.has(key)));
      if (!fits) {
        rest.push(pending);
        continue;
      }
      group.push(pending);
      checks += pending.checks.length;
      mutations += pending.mutations.length;
      for (const key of pending.keys) keys.add(key);
    }
    this.#queue = rest;
    return group;
  }

  async #commit(group: Pending[]): Promise<void> {
    for (let round = 0; group.length > 1 && round <= REGROUPS; round++) {
      let result: Deno.KvCommitResult | Deno.KvCommitError;
      try {
        result = await this.#apply(group).commit();
      } catch {
        // Refused whole (e.g. one value too large): each is made alone below, and only its
        // own commit throws.
        break;
      }
      if (result.ok) {
        for (const pending of group) this.#answer(pending, result);
        return;
      }
      let current;
      try {
        current = await this.#versionstamps(group);
      } catch {
        break;
      }
      const holds = (check: Deno.AtomicCheck) =>
        current.get(keyId(check.key)) === (check.versionstamp ?? null);
      const lost = group.filter((pending) => !pending.checks.every(holds));
      for (const pending of lost) this.#answer(pending, result);
      group = group.filter((pending) => !lost.includes(pending));
    }
    // Alone (the group's commits touch distinct keys, so they may go side by side).
    await Promise.all(group.map(async (pending) => {
      try {
        this.#answer(pending, await this.#apply([pending]).commit());
      } catch (error) {
        pending.reject(error);
      }
    }));
  }

  /** The versionstamps the keys `group` checked have now (null: no entry), by key id. */
  async #versionstamps(group: Pending[]): Promise<Map<string, string | null>> {
    const keys = group.flatMap((pending) => pending.checks.map((check) => check.key));
    const entries = await getManyInTens(this.kv, keys);
    return new Map(entries.map((entry) => [keyId(entry.key), entry.versionstamp]));
  }

  #answer(pending: Pending, result: Deno.KvCommitResult | Deno.KvCommitError): void {
    if (result.ok) this.known?.committed(pending.mutations, result.versionstamp);
    pending.resolve(result);
  }

  #apply(group: Pending[]): Deno.AtomicOperation {
    const op = this.kv.atomic();
    for (const { checks, mutations } of group) op.check(...checks).mutate(...mutations);
    return op;
  }
}

/** An atomic operation that records what it is given, and commits through its group. */
class GroupedOperation implements Deno.AtomicOperation {
  #checks: Deno.AtomicCheck[] = [];
  #mutations: Deno.KvMutation[] = [];
  #keys = new Set<string>();
  #committed = false;

  constructor(private submit: (pending: Pending) => void) {}

  check(...checks: Deno.AtomicCheck[]): this {
    for (const check of checks) {
      this.#checks.push(check);
      this.#keys.add(keyId(check.key));
    }
    return this;
  }

  mutate(...mutations: Deno.KvMutation[]): this {
    for (const mutation of mutations) {
      this.#mutations.push(mutation);
      this.#keys.add(keyId(mutation.key));
    }
    return this;
  }

  sum(key: Deno.KvKey, n: bigint): this {
    return this.mutate({ type: "sum", key, value: new Deno.KvU64(n) });
  }

  min(key: Deno.KvKey, n: bigint): this {
    return this.mutate({ type: "min", key, value: new Deno.KvU64(n) });
  }

  max(key: Deno.KvKey, n: bigint): this {
    return this.mutate({ type: "max", key, value: new Deno.KvU64(n) });
  }

  set(key: Deno.KvKey, value: unknown, options?: { expireIn?: number }): this {
    return this.mutate(
      options?.expireIn === undefined
        ? { type: "set", key, value }
        : { type: "set", key, value, expireIn: options.expireIn },
    );
  }

  delete(key: Deno.KvKey): this {
    return this.mutate({ type: "delete", key });
  }

  enqueue(): this {
    throw new Error("Cannot enqueue in a grouped commit (background work is job records)");
  }

  commit(): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
    if (this.#committed) throw new Error("Cannot commit an atomic operation twice");
    this.#committed = true;
    return new Promise((resolve, reject) =>
      this.submit({
        checks: this.#checks,
        mutations: this.#mutations,
        keys: this.#keys,
        resolve,
        reject,
      })
    );
  }
}

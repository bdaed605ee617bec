/**
 * Opens the store, local or remote, and smooths what differs between them.
 *
 * - Local SQLite file: "database is locked" answers come when several processes or handles write at
 *   once; such a commit did not apply, so it is run again.
 * - Remote store (KV Connect: `http(s)://` with `DENO_KV_ACCESS_TOKEN`; Deno Deploy's managed KV):
 *   there are no KV queues, so `enqueue` and `listenQueue` refuse at once instead of failing later
 *   (background work is job records, `kv/jobs.ts`). Every call is a network round trip. Deno's client
 *   resends by itself a write whose answer was lost (network error, 5xx), so a write may apply and
 *   then be answered as a failed check, or, without checks, apply twice; an error that does reach us
 *   mid-answer leaves the same doubt. A commit is therefore run again here only when applying it
 *   twice is harmless: it has a check (a second application fails it, and every caller reads again
 *   after a failed check) or it only sets and deletes. `kv/README.md` says how each commit is safe.
 * - KV Connect (a URL): Deno's client speaks HTTP/2 on a socket with Nagle's algorithm on
 *   (denoland/deno#35581) and without vectored writes, so its `h2` crate writes a body of 1,024 bytes
 *   or more apart from the frame head before it, and the second write waits until the server
 *   acknowledges the first, which a server with nothing to answer yet delays about 40 ms; small
 *   requests made in one turn leave together. A `getMany` is cut into calls whose bodies stay
 *   under that, made at once. A commit whose body may reach it (`kv/call_sizes.ts` bounds it as it
 *   is built) goes out behind a one-key read made in the same turn, whose answer, within a round
 *   trip, lets it out: two round trips instead of one and 40 ms, a gain on any store nearer than
 *   40 ms (docs/performance.md); a smaller commit goes out at once.
 */

import { checkBytes, HELD_BODY_BYTES, mutationBytes, readBytes, valueBytes } from "./call_sizes.ts";

const MAX_ATTEMPTS = 50;

function isLocked(error: unknown): boolean {
  return error instanceof Error && /database is locked|SQLITE_BUSY/i.test(error.message);
}

/** A write that failed on the network; a 4xx answer is final and not one of them. */
function isNetworkFailure(error: unknown): boolean {
  return error instanceof Error && /KV Connect failed/.test(error.message) &&
    !/status=4\d\d/.test(error.message);
}

async function retry<T>(
  run: () => Promise<T>,
  retriable: (error: unknown) => boolean,
): Promise<T> {
  for (let attempt = 1;; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (!retriable(error) || attempt >= MAX_ATTEMPTS) throw error;
      await new Promise((r) => setTimeout(r, Math.min(2 ** attempt, 50) * Math.random()));
    }
  }
}

// Never written: a read of it only has to be answered.
const PROMPT_KEY: Deno.KvKey = ["commit_prompt"];

/** True when `path` names a store reached over the network (Deno Deploy's is `undefined`). */
export function isRemoteKvPath(path: string | undefined): boolean {
  return path === undefined || /^https?:\/\//.test(path);
}

/** Opens a KV (`undefined` path = the platform's default store) that rides out what its kind of store does. */
export async function openKv(path?: string): Promise<Deno.Kv> {
  const kv = await Deno.openKv(path);
  const remote = isRemoteKvPath(path);
  // The store's own methods are replaced on the instance, once: every request reads through
  // them, and a Proxy's trap with an async wrapper on each call cost about 2 µs of a `/v1`
  // request's JavaScript time (docs/performance.md).
  const atomic = kv.atomic.bind(kv);
  const get = kv.get.bind(kv);
  const viaConnect = path !== undefined && remote;
  const prompt = viaConnect ? () => void get(PROMPT_KEY).catch(() => {}) : null;
  kv.atomic = () => wrapAtomic(atomic(), remote, prompt);
  if (viaConnect) kv.getMany = inSmallCalls(kv.getMany.bind(kv));
  if (remote) {
    kv.enqueue = kv.listenQueue = () => {
      throw new Error("Cannot use KV queues: a remote store has none (use job records)");
    };
    return kv;
  }
  kv.get = retryWhenLocked(kv.get.bind(kv));
  kv.getMany = retryWhenLocked(kv.getMany.bind(kv));
  kv.set = retryWhenLocked(kv.set.bind(kv));
  kv.delete = retryWhenLocked(kv.delete.bind(kv));
  return kv;
}

/** `getMany` in calls whose bodies stay under `HELD_BODY_BYTES`, made at once. */
function inSmallCalls(getMany: Deno.Kv["getMany"]): Deno.Kv["getMany"] {
  return (async (
    keys: readonly Deno.KvKey[],
    options?: { consistency?: Deno.KvConsistencyLevel },
  ) => {
    const calls: Promise<Deno.KvEntryMaybe<unknown>[]>[] = [];
    let call: Deno.KvKey[] = [];
    let bytes = 0;
    for (const key of keys) {
      const size = readBytes(key);
      if (call.length > 0 && bytes + size >= HELD_BODY_BYTES) {
        calls.push(getMany(call, options));
        call = [];
        bytes = 0;
      }
      call.push(key);
      bytes += size;
    }
    if (call.length > 0 || calls.length === 0) calls.push(getMany(call, options));
    return (await Promise.all(calls)).flat();
  }) as Deno.Kv["getMany"];
}

/** `run`, run again while the file is locked; an answer on the first try costs one `catch`. */
function retryWhenLocked<F extends (...args: never[]) => Promise<unknown>>(run: F): F {
  return ((...args: Parameters<F>) =>
    run(...args).catch((error: unknown) => {
      if (!isLocked(error)) throw error;
      return retry(() => run(...args), isLocked);
    })) as F;
}

function wrapAtomic(
  op: Deno.AtomicOperation,
  remote: boolean,
  prompt: (() => void) | null,
): Deno.AtomicOperation {
  const commit = op.commit.bind(op);
  if (!remote) {
    op.commit = () => retry(commit, isLocked);
    return op;
  }
  let checked = false;
  let counting = false;
  // At most the commit's body so far (`kv/call_sizes.ts`), while a prompt may be needed.
  let bytes = 0;
  const measure = prompt !== null;
  const check = op.check.bind(op);
  op.check = (...checks) => {
    checked ||= checks.length > 0;
    if (measure) { for (const { key } of checks) bytes += checkBytes(key); }
    return check(...checks);
  };
  for (const name of ["sum", "min", "max"] as const) {
    const mutate = op[name].bind(op);
    op[name] = (key, n) => {
      counting = true;
      if (measure) bytes += mutationBytes(key, 8);
      return mutate(key, n);
    };
  }
  const mutate = op.mutate.bind(op);
  op.mutate = (...mutations) => {
    counting ||= mutations.some((m) => m.type !== "set" && m.type !== "delete");
    if (measure) {
      for (const m of mutations) {
        const value = m.type === "set" ? valueBytes(m.value) : m.type === "delete" ? 0 : 8;
        bytes += mutationBytes(m.key, value, "expireIn" in m && m.expireIn !== undefined);
      }
    }
    return mutate(...mutations);
  };
  if (!measure) {
    op.commit = () => retry(commit, (error) => isNetworkFailure(error) && (checked || !counting));
    return op;
  }
  const set = op.set.bind(op);
  op.set = (key, value, options) => {
    bytes += mutationBytes(key, valueBytes(value), options?.expireIn !== undefined);
    return set(key, value, options);
  };
  const remove = op.delete.bind(op);
  op.delete = (key) => {
    bytes += mutationBytes(key, 0);
    return remove(key);
  };
  const enqueue = op.enqueue.bind(op);
  op.enqueue = (...args) => {
    bytes = Infinity;
    return enqueue(...args);
  };
  const send = () => {
    if (bytes >= HELD_BODY_BYTES) prompt();
    return commit();
  };
  op.commit = () => retry(send, (error) => isNetworkFailure(error) && (checked || !counting));
  return op;
}

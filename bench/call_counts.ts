/**
 * Bench only: counts what a bench server asks of its store and of the RPC node, so a bench can
 * print store commits, reads and RPC calls per request. The store handle's methods and the
 * process's `fetch` are wrapped in place before the app is built on them.
 */

/** Calls made since the server started. */
export interface CallCounts {
  commits: number;
  /** Commits that lost to a concurrent change (a failed check): each one a retried round. */
  conflicts: number;
  gets: number;
  getManys: number;
  /** Keys read by `getMany` calls. */
  getManyKeys: number;
  lists: number;
  /** JSON-RPC calls by method. */
  rpc: Record<string, number>;
}

/** Counts `kv`'s commits and reads, and every JSON-RPC call made through `fetch` to `rpcUrl`. */
export function countCalls(kv: Deno.Kv, rpcUrl: string): CallCounts {
  const counts: CallCounts = {
    commits: 0,
    conflicts: 0,
    gets: 0,
    getManys: 0,
    getManyKeys: 0,
    lists: 0,
    rpc: {},
  };
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = async () => {
      counts.commits++;
      const result = await commit();
      if (!result.ok) counts.conflicts++;
      return result;
    };
    return op;
  };
  const get = kv.get.bind(kv);
  kv.get = ((key: Deno.KvKey, options?: { consistency?: Deno.KvConsistencyLevel }) => {
    counts.gets++;
    return get(key, options);
  }) as Deno.Kv["get"];
  const getMany = kv.getMany.bind(kv);
  kv.getMany = ((keys: Deno.KvKey[], options?: { consistency?: Deno.KvConsistencyLevel }) => {
    counts.getManys++;
    counts.getManyKeys += keys.length;
    return getMany(keys, options);
  }) as Deno.Kv["getMany"];
  const list = kv.list.bind(kv);
  kv.list = ((selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
    counts.lists++;
    return list(selector, options);
  }) as Deno.Kv["list"];
  const fetch = globalThis.fetch;
  globalThis.fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url.startsWith(rpcUrl) && typeof init?.body === "string") {
      const method = (JSON.parse(init.body) as { method?: string }).method ?? "?";
      counts.rpc[method] = (counts.rpc[method] ?? 0) + 1;
    }
    return fetch(input, init);
  };
  return counts;
}

/**
 * What changed over the `spans` (each a snapshot before and one after), added up, per request:
 * `label: n` pairs for a table cell.
 */
export function perRequest(spans: [CallCounts, CallCounts][], requests: number): string {
  const per = (count: (c: CallCounts) => number) =>
    (spans.reduce((sum, [before, after]) => sum + count(after) - count(before), 0) /
      Math.max(1, requests)).toFixed(2);
  const methods = [...new Set(spans.flatMap(([, after]) => Object.keys(after.rpc)))];
  return [
    `commits ${per((c) => c.commits)}`,
    `get ${per((c) => c.gets)}`,
    `getMany ${per((c) => c.getManys)}`,
    `list ${per((c) => c.lists)}`,
    ...methods.map((method) => `${method} ${per((c) => c.rpc[method] ?? 0)}`),
  ].join(", ");
}

/**
 * Counts the listings a store handle makes of keys starting with `first` (or whose first part
 * `first` accepts; of a listing's prefix or start), and the entries they hand out, each weighed by `weigh` (1 by default): the handle's
 * `list` is wrapped in place, so an app already built on it is counted too.
 */
export function countListings(
  kv: Deno.Kv,
  first: string | ((part: Deno.KvKeyPart | undefined) => boolean),
  weigh: (value: unknown) => number = () => 1,
): { listings: number; entries: number } {
  const counts = { listings: 0, entries: 0 };
  const list = kv.list.bind(kv);
  kv.list = (<T>(selector: Deno.KvListSelector, options?: Deno.KvListOptions) => {
    const iter = list<T>(selector, options);
    const key = "prefix" in selector ? selector.prefix : "start" in selector ? selector.start : [];
    if (typeof first === "string" ? key[0] !== first : !first(key[0])) return iter;
    counts.listings++;
    const next = iter.next.bind(iter);
    iter.next = async () => {
      const result = await next();
      if (!result.done) counts.entries += weigh(result.value.value);
      return result;
    };
    return iter;
  }) as typeof kv.list;
  return counts;
}

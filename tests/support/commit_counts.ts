/**
 * Counts the commits made on a store handle, and those that lost a check: the handle's `atomic` is
 * wrapped in place, so an app already built on it is counted too.
 */
export function countCommits(kv: Deno.Kv): { made(): number; lost(): number } {
  let made = 0;
  let lost = 0;
  const atomic = kv.atomic.bind(kv);
  kv.atomic = () => {
    const op = atomic();
    const commit = op.commit.bind(op);
    op.commit = async () => {
      made++;
      const result = await commit();
      if (!result.ok) lost++;
      return result;
    };
    return op;
  };
  return { made: () => made, lost: () => lost };
}

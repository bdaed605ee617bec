/** Bounding a log kept as one entry per record under a prefix, its keys in time order. */

/** Deletes all but the newest `keep` entries under `prefix` (at most 200 more per call). */
export async function trimToNewest(kv: Deno.Kv, prefix: Deno.KvKey, keep: number): Promise<void> {
  const iter = kv.list({ prefix }, { reverse: true, limit: keep + 200 });
  let seen = 0;
  let op = kv.atomic();
  let pending = 0;
  for await (const entry of iter) {
    if (++seen <= keep) continue;
    op.delete(entry.key);
    if (++pending === 100) {
      await op.commit();
      op = kv.atomic();
      pending = 0;
    }
  }
  if (pending > 0) await op.commit();
}

/**
 * A commit that Deno's KV Connect client sends at once. Its connections leave Nagle's algorithm on
 * (denoland/deno#35581), so a request of more than about 1 KB (a payout's reservation, its mark, its
 * settlement: a record with its signed transaction) holds its body back until the server has
 * acknowledged its head, which a server with nothing to answer yet delays about 40 ms. A one-key
 * read made just before it, in the same turn, is answered within a round trip, and that answer
 * lets the commit out: two round trips instead of one and 40 ms, a gain on any store nearer than
 * 40 ms (docs/performance.md). On a local store the read costs microseconds.
 */

// Never written: the read only has to be answered.
const PROMPT_KEY: Deno.KvKey = ["commit_prompt"];

/** Commits `op`, made on `kv`, behind a one-key read. */
export function commitAtOnce(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
  kv.get(PROMPT_KEY).catch(() => {});
  return op.commit();
}

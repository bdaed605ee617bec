/**
 * Fixed-window counters of the abuse limits (`lib/quota/abuse_limits.ts`): one entry per action,
 * client and window. Taking a token reads the count and writes count + 1 under a versionstamp check,
 * so instances sharing one store never let more than the limit through between them.
 */

/** Key of one client's counter of one action in one window. */
function abuseCountKey(action: string, client: string, window: number): Deno.KvKey {
  return ["abuse_counts", action, client, window];
}

/** Counts one use; false when the window already holds `limit` uses (or the store stays contended). */
export async function takeAbuseToken(
  kv: Deno.Kv,
  key: { action: string; client: string },
  options: { limit: number; windowMs: number; now: number },
): Promise<boolean> {
  const window = Math.floor(options.now / options.windowMs);
  const entryKey = abuseCountKey(key.action, key.client, window);
  // Kept until its window is surely over on every instance's clock.
  const expireIn = (window + 2) * options.windowMs - options.now;
  for (let attempt = 0; attempt < 20; attempt++) {
    const entry = await kv.get<number>(entryKey);
    const count = entry.value ?? 0;
    if (count >= options.limit) return false;
    const result = await kv.atomic().check(entry).set(entryKey, count + 1, { expireIn }).commit();
    if (result.ok) return true;
  }
  // Twenty lost races in a row means a flood of this very action: refusing it is the safe answer.
  return false;
}

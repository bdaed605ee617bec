/**
 * Fixed-window counters of the abuse limits (`lib/quota/abuse_limits.ts`): one entry per action and
 * client, holding the current window's count (`window_counts.ts`).
 */
import { CommitConflictError } from "../core/commit_retry.ts";
import { getWindowCount, takeWindowRoom } from "./window_counts.ts";

/** Key of one client's counter of one action. */
function abuseCountKey(action: string, client: string): Deno.KvKey {
  return ["abuse_counts", action, client];
}

/** Counts one use; false when the window already holds `limit` uses (or the store stays contended). */
export async function takeAbuseToken(
  kv: Deno.Kv,
  key: { action: string; client: string },
  options: { limit: number; windowMs: number; now: number },
): Promise<boolean> {
  try {
    const { taken } = await takeWindowRoom(kv, abuseCountKey(key.action, key.client), {
      now: options.now,
      windowMs: options.windowMs,
      wanted: 1,
      max: options.limit,
    }, { label: "count an abuse-limited action", rounds: 20 });
    return taken === 1;
  } catch (error) {
    // Twenty lost races in a row means a flood of this very action: refusing it is the safe answer.
    if (error instanceof CommitConflictError) return false;
    throw error;
  }
}

/** The uses counted in the current window, without counting one (a read, no write). */
export async function getAbuseCount(
  kv: Deno.Kv,
  key: { action: string; client: string },
  options: { windowMs: number; now: number },
): Promise<number> {
  return await getWindowCount(kv, abuseCountKey(key.action, key.client), options);
}

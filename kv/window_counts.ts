/**
 * Fixed-window caps counted in the store: the uses of one window (a minute, an hour) kept in one
 * entry, taken with a read-check-write commit so instances sharing one store never let more than
 * the cap through between them. Serves the abuse limits (`abuse_counts.ts`) and the per-project
 * watch event cap (`watches.ts`).
 */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";

/** The uses counted in one window; a count of an older window counts as zero. */
interface WindowCount {
  /** Window number: the time divided by the window's length. */
  window: number;
  count: number;
}

/**
 * Takes room for up to `wanted` uses in the current window, never past `max`; returns how many
 * were counted before and how many it took. The entry expires once its window is surely over on
 * every instance's clock. Throws `CommitConflictError` (labelled `label`) after `rounds` lost races.
 */
export async function takeWindowRoom(
  kv: Deno.Kv,
  key: Deno.KvKey,
  input: { now: number; windowMs: number; wanted: number; max: number },
  options: { label: string; rounds?: number },
): Promise<{ before: number; taken: number }> {
  const window = Math.floor(input.now / input.windowMs);
  const expireIn = (window + 2) * input.windowMs - input.now;
  return await commitWithRetry(options.label, async () => {
    const entry = await kv.get<WindowCount>(key);
    const before = entry.value?.window === window ? entry.value.count : 0;
    const taken = Math.max(0, Math.min(input.wanted, input.max - before));
    if (taken === 0) return { before, taken };
    const count: WindowCount = { window, count: before + taken };
    const result = await kv.atomic().check(entry).set(key, count, { expireIn }).commit();
    return result.ok ? { before, taken } : RETRY;
  }, options.rounds === undefined ? {} : { rounds: options.rounds });
}

/** The uses counted so far in the current window, without taking any (a read, no write). */
export async function getWindowCount(
  kv: Deno.Kv,
  key: Deno.KvKey,
  input: { now: number; windowMs: number },
): Promise<number> {
  const entry = await kv.get<WindowCount>(key);
  return entry.value?.window === Math.floor(input.now / input.windowMs) ? entry.value.count : 0;
}

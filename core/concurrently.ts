/** A bounded pool for independent async work over a known list. */

/**
 * Runs `run` on every item, at most `limit` at once: each slot takes the next item as soon as its
 * previous one ends, so one slow item holds only its own slot.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  run: (item: T) => Promise<void>,
  options: { limit: number },
): Promise<void> {
  // One shared iterator: each slot takes the next item until none is left.
  const queue = items.values();
  const slot = async () => {
    for (const item of queue) await run(item);
  };
  await Promise.all(Array.from({ length: Math.min(options.limit, items.length) }, slot));
}

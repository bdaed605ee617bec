/**
 * The cap on a project's messages a minute (its "Messages a minute" setting): at most `cap`
 * messages first sent in any 60 consecutive clock seconds. The publisher keeps its sends per clock
 * second (`PublisherState.sent`, at most 60 pairs); a retry is the same message and is not counted
 * again.
 */

const WINDOW_SECONDS = 60;

/** The sends still inside the window that ends in the current second. */
export function recentSends(
  sent: ReadonlyArray<[number, number]>,
  now: number,
): Array<[number, number]> {
  const second = Math.floor(now / 1_000);
  return sent.filter(([at]) => at > second - WINDOW_SECONDS).map(([at, count]) => [at, count]);
}

/** Messages the cap still allows now (`Infinity` without a cap). */
export function capRoom(
  sent: ReadonlyArray<[number, number]>,
  options: { cap: number | null; now: number },
): number {
  if (options.cap === null) return Infinity;
  const used = recentSends(sent, options.now).reduce((sum, [, count]) => sum + count, 0);
  return Math.max(0, options.cap - used);
}

/** When the cap next allows a message (Unix ms): the start of the second the oldest sends leave. */
export function capFreesAt(
  sent: ReadonlyArray<[number, number]>,
  options: { cap: number; now: number },
): number {
  const recent = recentSends(sent, options.now).sort(([a], [b]) => a - b);
  let used = recent.reduce((sum, [, count]) => sum + count, 0);
  for (const [at, count] of recent) {
    used -= count;
    if (used < options.cap) return (at + WINDOW_SECONDS) * 1_000;
  }
  return options.now;
}

/** The sends with `count` more in the current second. */
export function addSends(
  sent: ReadonlyArray<[number, number]>,
  options: { now: number; count: number },
): Array<[number, number]> {
  const recent = recentSends(sent, options.now);
  if (options.count === 0) return recent;
  const second = Math.floor(options.now / 1_000);
  const last = recent.at(-1);
  if (last && last[0] === second) last[1] += options.count;
  else recent.push([second, options.count]);
  return recent;
}

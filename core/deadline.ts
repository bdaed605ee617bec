/**
 * A bounded wait, for pages that must not hang on a slow RPC node. The work itself is not
 * cancelled: it runs on (and may still fill a cache) while the caller goes on with the fallback.
 */

/** The value of `promise`, or `options.fallback` when it has not settled within `options.ms`. */
export async function withDeadline<T, F>(
  promise: Promise<T>,
  options: { ms: number; fallback: F },
): Promise<T | F> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<F>((resolve) => {
    timer = setTimeout(() => resolve(options.fallback), options.ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

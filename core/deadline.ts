/**
 * Bounded waits on work that is not cancelled: it runs on (and may still fill a cache) while the
 * caller goes on, with a fallback (pages that must not hang on a slow RPC node) or an abort (a
 * request that must answer by its deadline).
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

/**
 * The value of `promise`, or a rejection with the signal's reason once `signal` aborts: a caller
 * waiting on work it shares with others (an in-flight cache load) stops at its own deadline.
 */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Waiting that a caller's AbortSignal can end. */

/** Waits `ms` (nothing when it is not positive); rejects when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!(ms > 0)) {
    return signal?.aborted ? Promise.reject(signal.reason) : Promise.resolve();
  }
  return new Promise((resolve, reject) => {
    const done = () => {
      signal?.removeEventListener("abort", abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    if (signal?.aborted) abort();
    else signal?.addEventListener("abort", abort, { once: true });
  });
}

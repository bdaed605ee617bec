/** Runs tasks one at a time per key within this process; tasks of different keys run freely. */
export class KeyedLock {
  #tails = new Map<string, Promise<unknown>>();

  /**
   * Runs `task` once every earlier task of `key` has settled; answers what it answers. With
   * `signal`, a task still waiting for its turn when the signal aborts never runs: the call
   * rejects with the signal's reason (a request's deadline bounds its wait in the queue).
   */
  /** True while a task of `key` runs or waits. */
  busy(key: string): boolean {
    return this.#tails.has(key);
  }

  run<T>(
    key: string,
    task: () => Promise<T>,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<T> {
    const { signal } = options;
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const turn = signal ? Promise.race([previous, aborted(signal)]) : previous;
    const start = () => {
      if (signal?.aborted) return Promise.reject(signal.reason);
      return task();
    };
    // The queue moves on when the earlier task ends, whether this one waited for it or gave up.
    const result = turn.then(start, (error) => signal?.aborted ? Promise.reject(error) : start());
    const tail = Promise.all([previous.then(() => {}, () => {}), result.then(() => {}, () => {})]);
    this.#tails.set(key, tail);
    // The last task of a key removes the key, so idle keys hold no memory.
    tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}

/** Runs tasks one at a time per key within this process; tasks of different keys run freely. */
export class KeyedLock {
  #tails = new Map<string, Promise<unknown>>();

  /** Runs `task` once every earlier task of `key` has settled; answers what it answers. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(() => {}, () => {});
    this.#tails.set(key, tail);
    // The last task of a key removes the key, so idle keys hold no memory.
    tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}

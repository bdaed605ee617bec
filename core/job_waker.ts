/** In-process "new work is due" signal: lets a worker in this instance start at once instead of at its next poll. */

/** Wakes the job workers of this process; never carries the job itself. */
export class JobWaker {
  #listeners = new Set<() => void>();

  /** Registers a listener; returns the function that removes it. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Tells every listening worker to look for due jobs now. */
  wake(): void {
    for (const listener of this.#listeners) listener();
  }
}

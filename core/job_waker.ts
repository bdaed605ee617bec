/** In-process "new work is due" signal: lets a worker in this instance start at once instead of at its next poll. */

/** Wakes the job workers of this process; never carries the job itself. */
export class JobWaker {
  #listeners = new Set<() => void>();
  #timers = new Set<ReturnType<typeof setTimeout>>();

  /** Registers a listener; returns the function that removes it. */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size > 0) return;
      for (const timer of this.#timers) clearTimeout(timer);
      this.#timers.clear();
    };
  }

  /** Tells every listening worker to look for due jobs now. */
  wake(): void {
    for (const listener of this.#listeners) listener();
  }

  /**
   * Wakes the workers in `delayMs`, when a job of this instance falls due between two polls (the
   * 1.5 s confirmation checks), so it runs on time rather than at the next poll.
   */
  wakeIn(delayMs: number): void {
    if (this.#listeners.size === 0) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.wake();
    }, Math.max(0, delayMs));
    this.#timers.add(timer);
  }
}

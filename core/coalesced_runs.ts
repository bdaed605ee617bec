/**
 * Runs of a task that callers share, one at a time per key: a caller arriving while a run goes on
 * waits for the next run, which starts once that one ends and serves every caller that arrived
 * meanwhile. So each caller is served by a run that started after it asked (it sees what the caller
 * wrote before asking), and a burst of callers costs two runs, not one each.
 */
export class CoalescedRuns {
  #running = new Map<string, Promise<void>>();
  #next = new Map<string, Promise<void>>();

  /** True while a run of `key` goes on. */
  busy(key: string): boolean {
    return this.#running.has(key);
  }

  /** Resolves once a run of `task` for `key` that started after this call has ended. */
  run(key: string, task: () => Promise<void>): Promise<void> {
    const next = this.#next.get(key);
    if (next) return next;
    const running = this.#running.get(key);
    if (!running) return this.#start(key, task);
    const queued = running.then(() => this.#start(key, task), () => this.#start(key, task));
    this.#next.set(key, queued);
    return queued;
  }

  #start(key: string, task: () => Promise<void>): Promise<void> {
    this.#next.delete(key);
    const run = task().finally(() => {
      if (this.#running.get(key) === run) this.#running.delete(key);
    });
    this.#running.set(key, run);
    return run;
  }
}

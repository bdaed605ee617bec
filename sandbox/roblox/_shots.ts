/** A planned misbehaviour: answer the next `count` matching requests this way. */
export interface Shot<T> {
  count: number;
  plan: T;
}

/** A queue of N-shot switches; each request takes at most one shot. */
export class Shots<T> {
  #queue: Shot<T>[] = [];

  /** Appends `count` shots of `plan` after the ones already queued. */
  add(plan: T, count = 1): void {
    if (!Number.isInteger(count) || count < 1) {
      throw new RangeError("Count must be a positive integer");
    }
    this.#queue.push({ count, plan });
  }

  /** Takes the next shot, or null when the queue is empty (normal behaviour). */
  take(): T | null {
    const head = this.#queue[0];
    if (!head) return null;
    head.count -= 1;
    if (head.count === 0) this.#queue.shift();
    return head.plan;
  }

  clear(): void {
    this.#queue = [];
  }

  pending(): Shot<T>[] {
    return this.#queue.map((shot) => ({ ...shot }));
  }
}

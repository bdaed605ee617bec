/** Time source injected everywhere time matters, so tests move time instead of sleeping. */
export interface Clock {
  /** Unix time in milliseconds. */
  now(): number;
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests can set and advance by hand. */
export class ManualClock implements Clock {
  constructor(private time = Date.UTC(2026, 0, 1)) {}
  /** Current time in ms. */
  now(): number {
    return this.time;
  }
  /** Moves time forward by `ms`. */
  advance(ms: number): void {
    this.time += ms;
  }
  /** Sets the time to `ms`. */
  set(ms: number): void {
    this.time = ms;
  }
}

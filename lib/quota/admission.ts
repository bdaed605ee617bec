/**
 * Step 2 of a route that goes on while its request is counted (the payouts): the request is
 * counted once, by a quota round started at once, and the route awaits the verdict before its
 * first write and before its answer.
 */
import type { QuotaVerdict } from "./quota_plan.ts";

/** A request's way through step 2. */
export class Admission {
  #verdict: Promise<void>;

  /**
   * Starts counting the request: `count` counts it and answers its verdict; `refuse` turns a
   * refusal into the route's error.
   */
  constructor(count: () => Promise<QuotaVerdict>, refuse: (verdict: QuotaVerdict) => void) {
    this.#verdict = count().then(refuse);
    // Heard here: the route awaits it again before its first write and before its answer.
    this.#verdict.catch(() => {});
  }

  /** Resolves once the request is counted within the quotas; rejects with the quota's error. */
  verdict(): Promise<void> {
    return this.#verdict;
  }
}

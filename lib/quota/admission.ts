/**
 * Step 2 of a route that goes on while its request is counted (the payouts): the request is
 * counted at most once and before its answer, either by a quota round started at once, or, for a
 * quiet project, by the commit of the route's first write (`folded_count.ts`); a route that did
 * not write asks for the verdict, which then counts it alone.
 */
import type { QuotaVerdict } from "./quota_plan.ts";

/** A request's way through step 2. */
export class Admission {
  #verdict: Promise<void> | null = null;
  #foldable: boolean;

  /**
   * `count` counts the request alone and answers its verdict; `refuse` turns a refusal into the
   * route's error. `foldable`: the route's first commit may count it instead.
   */
  constructor(
    private count: () => Promise<QuotaVerdict>,
    private refuse: (verdict: QuotaVerdict) => void,
    foldable: boolean,
  ) {
    this.#foldable = foldable;
    if (!foldable) this.#start();
  }

  /** Resolves once the request is counted within the quotas; rejects with the quota's error. */
  verdict(): Promise<void> {
    return this.#verdict ?? this.#start();
  }

  /** True, once, when the route's first commit may count the request (`folded` once it did). */
  mayFold(): boolean {
    const may = this.#foldable && this.#verdict === null;
    this.#foldable = false;
    return may;
  }

  /** The route's commit counted the request within the quotas. */
  folded(): void {
    this.#verdict = Promise.resolve();
  }

  #start(): Promise<void> {
    const verdict = this.count().then(this.refuse);
    // Heard here: the route awaits it again before its first write and before its answer.
    verdict.catch(() => {});
    this.#verdict = verdict;
    return verdict;
  }
}

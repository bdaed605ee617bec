/**
 * Step 2 of a route that goes on while its request is counted (the payouts): the request is
 * counted once, and the route awaits the verdict before its first write and before its answer.
 *
 * | The project here                       | The request is counted                                 |
 * | -------------------------------------- | ------------------------------------------------------ |
 * | busy (a lease, a round or a fold)      | by a quota round started at once (`request_quota.ts`)  |
 * | quiet                                  | by the payout's reservation commit (`takeFold`), else, |
 * |                                        | once the route needs the verdict, by a quota round     |
 *
 * A fold that does not count the request (a refusal, or its commit lost) hands it to a round, and
 * so does one not taken by the route's time (`foldUntil`).
 */
import type { QuotaVerdict } from "./quota_plan.ts";
import type { QuotaFold } from "./quota_fold.ts";

/** The count a reservation commit makes for its request (`QuotaFold`), settled by its outcome. */
export interface AdmissionFold extends Pick<QuotaFold, "key" | "add"> {
  /** Its commit applied with the count: the request is admitted. (The first call of the two counts.) */
  committed(versionstamp: string): void;
  /** Nothing was counted: a quota round counts the request. */
  release(): void;
}

/** A request's way through step 2. */
export class Admission {
  #verdict: Promise<void> | null = null;
  #fold: QuotaFold | null;

  /**
   * `count` counts the request in a quota round and answers its verdict; `refuse` turns a refusal
   * into the route's error; `fold`, for a quiet project, lets a commit of the route count it.
   */
  constructor(
    private count: () => Promise<QuotaVerdict>,
    private refuse: (verdict: QuotaVerdict) => void,
    fold: QuotaFold | null = null,
  ) {
    this.#fold = fold;
    if (!fold) this.#settleBy(this.#round());
  }

  /**
   * Resolves once the request is counted within the quotas; rejects with the quota's error. A
   * fold not taken yet is given up: a round counts the request.
   */
  verdict(): Promise<void> {
    if (!this.#verdict) {
      this.#fold?.release();
      this.#fold = null;
      this.#settleBy(this.#round());
    }
    return this.#verdict!;
  }

  /**
   * Gives the fold up when `signal` aborts unless a commit took it by then: a quota round counts
   * the request, in time for an answer that could not wait for that commit.
   */
  foldUntil(signal: AbortSignal): void {
    signal.addEventListener("abort", () => {
      if (this.#fold && !this.#verdict) this.verdict();
    }, { once: true });
  }

  /** The key of the counters a commit would count the request in (`takeFold`), if it may. */
  foldKey(): Deno.KvKey | null {
    return this.#verdict ? null : this.#fold?.key ?? null;
  }

  /** The request's count for the caller's commit to make, once; null when counted another way. */
  takeFold(): AdmissionFold | null {
    const fold = this.#fold;
    if (this.#verdict || !fold) return null;
    this.#fold = null;
    let resolve!: (outcome: Promise<void>) => void;
    this.#settleBy(new Promise<void>((r) => resolve = r));
    // The first of its outcomes settles it; a later call changes nothing.
    let settled = false;
    const settle = (outcome: () => Promise<void>) => {
      if (settled) return;
      settled = true;
      resolve(outcome());
    };
    return {
      key: fold.key,
      add: fold.add,
      committed: (versionstamp) =>
        settle(() => {
          fold.committed(versionstamp);
          return Promise.resolve();
        }),
      release: () =>
        settle(() => {
          fold.release();
          return this.#round();
        }),
    };
  }

  #round(): Promise<void> {
    return this.count().then(this.refuse);
  }

  #settleBy(verdict: Promise<void>): void {
    this.#verdict = verdict;
    // Heard here: the route awaits it again before its first write and before its answer.
    verdict.catch(() => {});
  }
}

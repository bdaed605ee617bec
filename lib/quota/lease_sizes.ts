/**
 * How much allowance a project's lease takes on this instance: about `LEASE_MS` of its request
 * rate here, so a busy project's requests answer from memory while a quiet one is counted request
 * by request (no lease below 2 requests a second), and never more than `MAX_LEASE`.
 */
import { LEASE_MS } from "./quota_plan.ts";

// Fewer requests than this in two seconds on this instance (2 a second) make blocks of one.
const MIN_LEASE_REQUESTS = 4;
/** A tenth of the minute's allowance: what one crash can lose at most per project and instance. */
export const MAX_LEASE = 60;
// Projects remembered; past it the table starts afresh (sizes only start small again).
const MAX_PROJECTS = 50_000;

/** Each project's requests of this second and the one before, on this instance. */
export class LeaseSizes {
  #rates = new Map<string, { second: number; current: number; previous: number }>();

  /** Notes one request of the project. */
  note(projectId: string): void {
    const second = Math.floor(performance.now() / 1000);
    const rate = this.#rates.get(projectId);
    if (rate?.second === second) rate.current++;
    else {
      if (this.#rates.size > MAX_PROJECTS) this.#rates.clear();
      const previous = rate?.second === second - 1 ? rate.current : 0;
      this.#rates.set(projectId, { second, current: 1, previous });
    }
  }

  /** About `LEASE_MS` of the project's rate here: 1 (no lease) below 2 requests a second. */
  block(projectId: string): number {
    const rate = this.#rates.get(projectId);
    const second = Math.floor(performance.now() / 1000);
    // Requests of the last two seconds: fewer than MIN_LEASE_REQUESTS means blocks of one.
    const recent = rate && rate.second >= second - 1 ? rate.previous + rate.current : 0;
    if (recent < MIN_LEASE_REQUESTS) return 1;
    return Math.min(MAX_LEASE, Math.round(recent / 2 * LEASE_MS / 1000));
  }
}

/**
 * What one round of the request quota writes for one project, as a pure function of what is stored.
 *
 * Counters hold allowance taken: requests counted (answered `ok` or refused) plus allowance leased
 * to instances and not settled yet (`leased`). Settling a lease gives its unused part back to the
 * window it was taken in. Waiting requests are answered in order against the counters; a request
 * that would be refused while other instances still hold leases of this minute is deferred instead
 * (not counted), because their unused allowance may come back: that keeps several instances as
 * exact as one. A lease is only prefetched while every waiting request of the round fits, and never
 * past either limit, so leases can make a project be refused early, never late.
 */
import type { RequestCounts } from "../../kv/request_counts.ts";

/** Requests a project may make in one clock minute. */
export const REQUESTS_PER_MINUTE = 600;
/** Requests a project may make in one UTC day. */
export const REQUESTS_PER_DAY = 100_000;
/** How long an instance may answer from a lease before it settles it. */
export const LEASE_MS = 2_000;
/** Past a lease's end by this much, its holder is taken to be gone and its allowance as used. */
export const LEASE_GRACE_MS = 5_000;

/** The outcome of counting one request. */
export type QuotaVerdict = "ok" | "rate_limited" | "daily_quota_exceeded";

/** Allowance an instance took ahead of its requests, answered from memory until it is settled. */
export interface Lease {
  minute: number;
  day: number;
  granted: number;
  remaining: number;
}

/** One project's part of a round. */
export interface ProjectRequest {
  /** Requests waiting to be counted. */
  waiting: number;
  /** Allowance to take beyond them, if it fits (0 at low rates). */
  prefetch: number;
  /** This instance's previous lease of the project, given back in this round. */
  settle?: Lease | undefined;
}

/** What the round writes and answers for one project. */
export interface ProjectPlan {
  next: RequestCounts;
  /** Verdicts of the first `verdicts.length` waiting requests; the others wait for a later round. */
  verdicts: QuotaVerdict[];
  /** The new lease's size (0: none). */
  leased: number;
  /** Requests actually used, by clock minute, for the usage counters. */
  used: Array<{ minute: number; n: number }>;
}

/** Plans one project's counters for a round at `now`. */
export function planProject(
  stored: RequestCounts | null,
  request: ProjectRequest,
  now: number,
): ProjectPlan {
  const minute = Math.floor(now / 60_000);
  const day = Math.floor(now / 86_400_000);
  const sameMinute = stored?.minute === minute;
  let m = sameMinute ? stored.minuteCount : 0;
  let d = stored?.day === day ? stored.dayCount : 0;
  let leased = sameMinute ? stored.leased ?? 0 : 0;
  let leasedUntil = sameMinute ? stored.leasedUntil ?? 0 : 0;
  const used: ProjectPlan["used"] = [];
  const settle = request.settle;
  if (settle) {
    if (settle.minute === minute) {
      m -= settle.remaining;
      leased = Math.max(0, leased - settle.granted);
    }
    if (settle.day === day) d -= settle.remaining;
    const n = settle.granted - settle.remaining;
    if (n > 0) used.push({ minute: settle.minute, n });
  }
  // Leases whose holders went quiet long ago were lost with them: their allowance stays used.
  if (now > leasedUntil + LEASE_GRACE_MS) leased = 0;
  const room = Math.max(0, Math.min(REQUESTS_PER_MINUTE - m, REQUESTS_PER_DAY - d));
  const answered = leased > 0 ? Math.min(request.waiting, room) : request.waiting;
  const verdicts: QuotaVerdict[] = [];
  for (let p = 1; p <= answered; p++) {
    // Position p sees the counters as they stand after the p-th request.
    if (d + p > REQUESTS_PER_DAY) verdicts.push("daily_quota_exceeded");
    else if (m + p > REQUESTS_PER_MINUTE) verdicts.push("rate_limited");
    else verdicts.push("ok");
  }
  const fits = answered === request.waiting && request.waiting <= room;
  const lease = fits ? Math.min(request.prefetch, room - request.waiting) : 0;
  if (lease > 0) {
    leased += lease;
    leasedUntil = Math.max(leasedUntil, now + LEASE_MS);
  }
  if (answered > 0) used.push({ minute, n: answered });
  const next: RequestCounts = {
    minute,
    minuteCount: m + answered + lease,
    day,
    dayCount: d + answered + lease,
  };
  if (leased > 0) Object.assign(next, { leased, leasedUntil });
  return { next, verdicts, leased: lease, used };
}

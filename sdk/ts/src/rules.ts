/**
 * The client rules of the Blocklink API, as `sdk/README.md` states them for every client (the Luau
 * SDK's `Retry.luau` holds the same ones; both SDKs run the cases of `sdk/client_rules.json`):
 *
 * 1. Retries: up to 3 attempts, 0.5 then 1.5 seconds apart, when there is no HTTP answer or the
 *    status is 5xx or 429. Of the 429 codes only `rate_limited` and `feed_rate_limited` are
 *    retried; the others are limits a few seconds cannot lift. No other 4xx is retried. A payout
 *    is retried with its body and idempotency key, so a retry can never pay twice.
 * 2. Quota back-off: `rate_limited` holds the client's own background work that the quotas count
 *    until the next clock minute, `daily_quota_exceeded` until the next UTC day, each plus a random
 *    part of 10 (60) seconds. The caller's own calls are never held.
 */

/** Attempts of one call, at most. */
export const MAX_ATTEMPTS = 3;

/** Milliseconds to wait before the second and the third attempt. */
export const RETRY_DELAYS_MS: readonly number[] = [500, 1_500];

/** The random part added to a hold, in seconds, by the window that ends it. */
export const HOLD_JITTER_SECONDS = { minute: 10, day: 60 } as const;

const NOT_RETRIED_429 = new Set([
  "recipient_rate_limited",
  "player_rate_limited",
  "hourly_budget_exceeded",
  "daily_quota_exceeded",
  "daily_tx_quota_exceeded",
  "daily_failed_tx_quota_exceeded",
]);

/** Whether an attempt that ended this way may be repeated; `status` null: no HTTP answer. */
export function shouldRetry(
  status: number | null,
  code: string | null,
): boolean {
  if (status === null || status >= 500) return true;
  if (status === 429) return code === null || !NOT_RETRIED_429.has(code);
  return false;
}

/**
 * Until when (Unix ms) an answer with this code holds background work the quotas count, from
 * `nowMs`; null when it holds nothing. `random` gives the jitter's share, in [0, 1).
 */
export function holdUntil(
  code: string,
  nowMs: number,
  random = Math.random,
): number | null {
  const now = nowMs / 1000;
  if (code === "rate_limited") {
    return ((Math.floor(now / 60) + 1) * 60 +
      random() * HOLD_JITTER_SECONDS.minute) * 1000;
  }
  if (code === "daily_quota_exceeded") {
    return ((Math.floor(now / 86_400) + 1) * 86_400 +
      random() * HOLD_JITTER_SECONDS.day) * 1000;
  }
  return null;
}

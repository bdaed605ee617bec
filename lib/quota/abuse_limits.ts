/**
 * Abuse limits: per-client caps on the actions that cost us without an API key. Each is a fixed
 * window counted in the store (`kv/abuse_counts.ts`), so the cap holds across every instance on
 * one store; going over answers 429 `rate_limited`. Limits are set through environment variables
 * (`lib/config.ts`), documented in the README.
 *
 * One exception: the dashboard's sign-in challenge is counted in this instance's memory, because
 * the spec has it write nothing to the database. That is enough there: the challenge stores
 * nothing, so what it costs is this instance's CPU, and that is what a per-instance cap protects.
 *
 * The client is the connection's address for actions before sign-in (or the first address in
 * `CLIENT_IP_HEADER` behind a proxy that sets it), and the developer account for dashboard
 * actions; new accounts are themselves capped per address, so fresh wallets do not buy more room.
 */
import type { Clock } from "../../core/clock.ts";
import { ApiError } from "../../core/api_error.ts";
import { takeAbuseToken } from "../../kv/abuse_counts.ts";

/** The capped actions. */
type AbuseAction =
  | "signin_challenge"
  | "developer_account"
  | "project_change"
  | "watch_create"
  | "key_create"
  | "test_ping";

/** How many uses of each action one client gets per window. */
export type AbuseLimits = Record<AbuseAction, number>;

/** Each action's window and how it reads in a refusal. */
export const ABUSE_WINDOWS: Readonly<Record<AbuseAction, { windowMs: number; what: string }>> = {
  signin_challenge: { windowMs: 60_000, what: "sign-in challenges from this address per minute" },
  developer_account: { windowMs: 3_600_000, what: "new accounts from this address per hour" },
  project_change: { windowMs: 3_600_000, what: "project creations and deletions per hour" },
  watch_create: { windowMs: 3_600_000, what: "new watches per hour" },
  key_create: { windowMs: 3_600_000, what: "new API keys per hour" },
  test_ping: { windowMs: 60_000, what: "test events per minute" },
};

// Longest client key kept: an IPv6 address fits; a forged header value is cut, not stored whole.
const MAX_CLIENT_CHARS = 64;
// Clients tracked in memory at once; past it, counters of ended windows are dropped first.
const MAX_LOCAL_CLIENTS = 10_000;

/** Counts uses of the capped actions in the store. */
export class AbuseLimiter {
  #local = new Map<string, { window: number; count: number }>();

  constructor(
    private kv: Deno.Kv,
    private clock: Clock,
    private options: { limits: AbuseLimits },
  ) {}

  /** Counts one use of `action` by `client`; throws 429 `rate_limited` when over the limit. */
  async take(action: AbuseAction, client: string): Promise<void> {
    const limit = this.options.limits[action];
    const { windowMs, what } = ABUSE_WINDOWS[action];
    const ok = await takeAbuseToken(this.kv, {
      action,
      client: client.slice(0, MAX_CLIENT_CHARS),
    }, { limit, windowMs, now: this.clock.now() });
    if (!ok) throw tooMany(limit, what);
  }

  /** Like `take`, counted in this instance's memory only (for routes that must not write). */
  takeLocal(action: AbuseAction, client: string): void {
    const limit = this.options.limits[action];
    const { windowMs, what } = ABUSE_WINDOWS[action];
    const window = Math.floor(this.clock.now() / windowMs);
    const key = `${action}:${client.slice(0, MAX_CLIENT_CHARS)}`;
    const counter = this.#local.get(key);
    if (counter && counter.window === window) {
      if (counter.count >= limit) throw tooMany(limit, what);
      counter.count++;
      return;
    }
    if (this.#local.size >= MAX_LOCAL_CLIENTS) this.#forgetEndedWindows();
    // Still full of live counters: a flood from many addresses; refusing is the safe answer.
    if (this.#local.size >= MAX_LOCAL_CLIENTS) throw tooMany(limit, what);
    this.#local.set(key, { window, count: 1 });
  }

  #forgetEndedWindows(): void {
    const now = this.clock.now();
    for (const [key, counter] of this.#local) {
      const action = key.slice(0, key.indexOf(":")) as AbuseAction;
      if (counter.window !== Math.floor(now / ABUSE_WINDOWS[action].windowMs)) {
        this.#local.delete(key);
      }
    }
  }
}

function tooMany(limit: number, what: string): ApiError {
  return new ApiError(429, "rate_limited", `Too many requests: at most ${limit} ${what}`);
}

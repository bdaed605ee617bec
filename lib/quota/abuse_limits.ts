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
 * The memory table holds at most 10,000 clients. A full table forgets the client it heard from
 * least recently to make room, never refuses a newcomer: a flood from many addresses then only
 * resets the oldest counters (each address still gets at most the limit per window while it is
 * remembered), and never locks everyone else out of signing in.
 *
 * The client is an address for actions before sign-in (`http/client_address.ts`: the entry our
 * own proxy added, an IPv6 /64 as one client), and the developer account for dashboard actions;
 * new accounts are themselves capped per address, so fresh wallets do not buy more room.
 *
 * Dashboard changes (`dashboard_change`: every change a member makes to a project, each one audit
 * log entry kept a year) are counted per member of a project, and only once the change is made
 * (`afterChange`): a refused body, or an action that changed nothing, writes nothing. Refusing
 * past the cap rather than folding entries together keeps the log's promise that it shows every
 * change that happened. So that concurrent requests cannot all pass the check before any is
 * counted, one member's changes to one project run one at a time on each instance: past the cap,
 * at most one more change per other instance can land.
 */
import type { Clock } from "../../core/clock.ts";
import { ApiError } from "../../core/api_error.ts";
import { KeyedLock } from "../../core/keyed_lock.ts";
import { getAbuseCount, takeAbuseToken } from "../../kv/abuse_counts.ts";

/** The capped actions. */
type AbuseAction =
  | "signin_challenge"
  | "developer_account"
  | "project_change"
  | "watch_create"
  | "key_create"
  | "test_ping"
  | "dashboard_change"
  | "sandbox_airdrop";

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
  dashboard_change: { windowMs: 3_600_000, what: "changes per hour by one member of a project" },
  sandbox_airdrop: { windowMs: 3_600_000, what: "sandbox SOL airdrops per hour" },
};

// Longest client key kept: an IPv6 address fits, and a project id with a wallet address; a forged
// header value is cut, not stored whole.
const MAX_CLIENT_CHARS = 80;
// Clients tracked in memory at once; past it, the least recently seen is forgotten.
const MAX_LOCAL_CLIENTS = 10_000;

/** Counts uses of the capped actions in the store. */
export class AbuseLimiter {
  // In order of last use (a use moves its entry to the end), so the first is the one to forget.
  #local = new Map<string, { window: number; count: number }>();
  // One client's counted-after changes, one at a time (`afterChange`).
  #changes = new KeyedLock();

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

  /**
   * Runs `change`, which answers its result and whether it was a use of `action` by `client`,
   * counted then: 429 `rate_limited` before it runs when the window is already full, nothing
   * counted when it fails or made no use. A client's changes run one at a time on this instance.
   */
  async afterChange<T>(
    action: AbuseAction,
    client: string,
    change: () => Promise<{ result: T; used: boolean }>,
  ): Promise<T> {
    const limit = this.options.limits[action];
    const { windowMs, what } = ABUSE_WINDOWS[action];
    const key = { action, client: client.slice(0, MAX_CLIENT_CHARS) };
    return await this.#changes.run(`${action}:${key.client}`, async () => {
      const counted = await getAbuseCount(this.kv, key, { windowMs, now: this.clock.now() });
      if (counted >= limit) throw tooMany(limit, what);
      const { result, used } = await change();
      if (used) await takeAbuseToken(this.kv, key, { limit, windowMs, now: this.clock.now() });
      return result;
    });
  }

  /** Like `take`, counted in this instance's memory only (for routes that must not write). */
  takeLocal(action: AbuseAction, client: string): void {
    const limit = this.options.limits[action];
    const { windowMs, what } = ABUSE_WINDOWS[action];
    const window = Math.floor(this.clock.now() / windowMs);
    const key = `${action}:${client.slice(0, MAX_CLIENT_CHARS)}`;
    const counter = this.#local.get(key);
    const current = counter?.window === window ? counter : { window, count: 0 };
    // Moved to the end, refused uses included: a client that keeps trying stays remembered.
    this.#local.delete(key);
    if (this.#local.size >= MAX_LOCAL_CLIENTS) this.#local.delete(this.#local.keys().next().value!);
    this.#local.set(key, current);
    if (current.count >= limit) throw tooMany(limit, what);
    current.count++;
  }
}

function tooMany(limit: number, what: string): ApiError {
  return new ApiError("rate_limited", `Too many requests: at most ${limit} ${what}`);
}

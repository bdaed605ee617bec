/**
 * The project-wide transaction limits (the 24-hour count, the failures' cap, each asset's hourly
 * budget) taken in leased blocks, as the request quota is (`lib/quota/`): a payout takes its places
 * from blocks its instance holds, in memory; only one that finds no room waits for a round, one
 * commit per project for all the payouts waiting then (`allowance_round.ts`), or, for a project
 * paying now and then here, none: its payout's reservation counts its places in its own commit
 * (`allowance_fold.ts`).
 *
 * | Concern     | Rule                                                                                   |
 * | ----------- | -------------------------------------------------------------------------------------- |
 * | Exact       | A block is granted in a commit checked on its scope's ledger (`kv/tx_allowance.ts`)    |
 * |             | and the previous release's list (`lib/migrations/previous_windows.ts`), only if the    |
 * |             | count with it stays within the limit. An open block counts whole until its holder      |
 * |             | settles it (a round closes the blocks it settles before reading them), so the places   |
 * |             | given out everywhere are at most the count, and the count at most the limit.           |
 * | Given back  | A failed payout's place, a settled attempt leaving the failures' cap, an unused place  |
 * |             | of a settled block: a sum into the bucket it was counted in, so it lowers exactly      |
 * |             | what it added, once (`giveBackOnce`). A grant skips the released counters: one read    |
 * |             | late only counts too much.                                                             |
 * | Lower limit | A block keeps the lowest limit its grant was judged against and serves no payout held  |
 * |             | to a lower one (`grantedWithin`): a budget cut binds at once (`reserve.ts`).           |
 * | Waiting     | A payout that does not fit while other instances hold open blocks waits for them, at   |
 * |             | most `DEFER_LIMIT_MS` and within its deadline; the limit refuses early by at most what |
 * |             | those blocks held unused (`MAX_PREFETCH` places per other instance).                   |
 * | Crashes     | A block is granted before its payouts reserve (`reserve.ts`). A dead instance's blocks |
 * |             | count whole; `LEASE_GRACE_MS` past their end any instance counts them used in their    |
 * |             | bucket: early, never late.                                                             |
 * | Bounds      | A use counts until the latest use of its bucket leaves the window: up to 10 minutes    |
 * |             | after its 24 hours, or a minute after its hour, so a limit may refuse that much early. |
 */
import type { Clock } from "../../../core/clock.ts";
import { ulid } from "../../../core/ids.ts";
import { log } from "../../../core/log.ts";
import { type AllowanceScope, bucketOf } from "../../../kv/tx_allowance.ts";
import { claimBy, claimFromBlocks } from "./allowance_claim.ts";
import { LeaseSizes } from "../../quota/lease_sizes.ts";
import {
  type AllowanceClaim,
  type AllowanceNeed,
  amountOf,
  grantedWithin,
  limitOf,
  NEED_SCOPES,
  type NeedScope,
  scopeOf,
} from "./allowance_grant.ts";
import {
  commitRound,
  type HeldLease,
  LEASE_MS,
  RELEASES_READ_MS,
  type RoundOutcome,
} from "./allowance_round.ts";

/** Places taken beyond the waiting payouts, at most: what one crash can strand per scope. */
const MAX_PREFETCH = 10n;
/** How soon a payout waiting for other instances' blocks looks again. */
const DEFER_MS = 50;
/** Longest wait for other instances' blocks: by then those it saw were settled, or are in use. */
const DEFER_LIMIT_MS = LEASE_MS + 1_000;

interface Waiter {
  need: AllowanceNeed;
  signal: AbortSignal | undefined;
  /** When it started waiting (real time). */
  since: number;
  resolve(claim: AllowanceClaim): void;
  reject(error: unknown): void;
}

interface ProjectState {
  leases: HeldLease[];
  /** When a round last read the released counters (this instance's clock). */
  releasesReadAt: number;
  waiters: Waiter[];
  round: Promise<void> | null;
  /** A payout's reservation is counting its places in its own commit. */
  folding: boolean;
  timer: ReturnType<typeof setTimeout> | null;
}

/** This instance's blocks of every project's transaction limits. */
export class TxAllowances {
  #projects = new Map<string, ProjectState>();
  #sizes = new LeaseSizes();
  #holder = ulid();

  constructor(private ctx: { kv: Deno.Kv; clock: Clock }) {}

  /** This instance's id in the ledgers' blocks. */
  get holder(): string {
    return this.#holder;
  }

  /**
   * A payout's places, from blocks held here or from new ones. A payout that only other
   * instances' open blocks keep out waits for them, until `signal` (its deadline) aborts: then
   * those scopes answer refused. One whose round has not answered when its deadline passes is
   * not reserved (`notReservedInTime`). With `fold`, a project paying now and then here (no room
   * in blocks held, no round and no other payout's fold under way) gets a `folded` claim instead
   * of a round: its reservation counts the places in its own commit (`allowance_fold.ts`).
   */
  take(
    projectId: string,
    need: AllowanceNeed,
    options: { signal?: AbortSignal | undefined; fold?: boolean } = {},
  ): Promise<AllowanceClaim> {
    this.#sizes.note(projectId);
    const state = this.#state(projectId);
    const now = this.ctx.clock.now();
    const held = NEED_SCOPES.map((s) => this.#usable(state, need, s, now));
    if (held.every((lease) => lease !== null)) {
      return Promise.resolve(
        claimFromBlocks(this.ctx, need, {
          at: now,
          leases: held as HeldLease[],
          refused: new Set(),
        }),
      );
    }
    const quiet = this.#sizes.block(projectId) === 1 && !state.round && !state.folding;
    if (options.fold && quiet && state.waiters.length === 0) {
      state.folding = true;
      const done = () => (state.folding = false);
      return Promise.resolve({
        at: now,
        refused: new Set(),
        commit: done,
        release: done,
        folded: true,
      });
    }
    const claimed = new Promise<AllowanceClaim>((resolve, reject) => {
      const since = performance.now();
      state.waiters.push({ need, signal: options.signal, since, resolve, reject });
      this.#startRound(projectId, state);
    });
    return claimBy(claimed, options.signal);
  }

  /** Settles the project's blocks held here, so the ledgers show what they gave out. */
  async settle(projectId: string): Promise<void> {
    const state = this.#projects.get(projectId);
    if (!state) return;
    await state.round;
    this.#startRound(projectId, state);
    await state.round;
  }

  /** Settles every block held here (an instance stopping); one it cannot counts whole. */
  async close(): Promise<void> {
    for (const [projectId, state] of this.#projects) {
      if (state.timer) clearTimeout(state.timer);
      state.timer = null;
      await state.round;
      await this.#round(projectId, state, []).catch((error) =>
        log("warn", "Cannot settle transaction allowance", { projectId, error })
      );
    }
  }

  #state(projectId: string): ProjectState {
    let state = this.#projects.get(projectId);
    if (!state) {
      state = {
        leases: [],
        waiters: [],
        round: null,
        folding: false,
        timer: null,
        releasesReadAt: -Infinity,
      };
      this.#projects.set(projectId, state);
    }
    return state;
  }

  /** A block usable now for `need` in `s`, if one is held: with room, granted within its limit. */
  #usable(state: ProjectState, need: AllowanceNeed, s: NeedScope, now: number): HeldLease | null {
    const [scope, n, limit] = [scopeOf(need, s), amountOf(need, s), limitOf(need, s)];
    return state.leases.find((l) =>
      l.scope === scope && !l.closing && !l.settled && now <= l.until &&
      bucketOf(scope, now) === l.b &&
      l.granted - l.taken >= n && grantedWithin(l.limit, limit)
    ) ?? null;
  }

  #startRound(projectId: string, state: ProjectState): void {
    if (state.round) return;
    const waiters = state.waiters.splice(0);
    state.round = this.#round(projectId, state, waiters)
      .catch((error) => {
        log("error", "Cannot take transaction allowance", { projectId, error });
        // The payouts of the round fail like a store error would fail them.
        for (const waiter of waiters) waiter.reject(error);
      })
      .finally(() => {
        state.round = null;
        if (state.waiters.length > 0) this.#startRound(projectId, state);
        else this.#scheduleSettle(projectId, state);
      });
  }

  /** Settles the project's blocks `LEASE_MS` after the last round, unless a round comes first. */
  #scheduleSettle(projectId: string, state: ProjectState): void {
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    if (!state.leases.some((l) => !l.settled)) return;
    state.timer = setTimeout(() => {
      state.timer = null;
      this.#startRound(projectId, state);
    }, LEASE_MS);
  }

  /**
   * One round for a project (`allowance_round.ts`): settles this instance's blocks of the scopes
   * it looks at and grants blocks for the waiting payouts; then answers them. A round comes when a
   * payout finds no room in the blocks held here, and `LEASE_MS` after the last one.
   */
  async #round(projectId: string, state: ProjectState, waiters: Waiter[]): Promise<void> {
    const scopes = new Set<AllowanceScope>(state.leases.map((l) => l.scope));
    for (const w of waiters) for (const s of NEED_SCOPES) scopes.add(scopeOf(w.need, s));
    if (scopes.size === 0) return;
    const list = [...scopes];
    // Closed before the round reads what they gave out, so no payout takes from them meanwhile.
    const closing = state.leases.filter((l) => list.includes(l.scope) && !l.settled);
    for (const lease of closing) lease.closing = true;
    const needs = waiters.map((w) => w.need);
    const decided = await commitRound(this.ctx, {
      projectId,
      holder: this.#holder,
      scopes: list,
      closing,
      needs,
      prefetch: this.#prefetch(projectId, needs.length),
      readReleases: this.ctx.clock.now() - state.releasesReadAt > RELEASES_READ_MS,
    });
    if (decided.readReleases) state.releasesReadAt = decided.now;
    for (const lease of closing) lease.settled = true;
    state.leases = [...state.leases.filter((l) => !l.settled), ...decided.granted];
    this.#answer(projectId, state, waiters, decided);
  }

  /** Answers a round's waiters: a claim, refused scopes included, or another turn. */
  #answer(
    projectId: string,
    state: ProjectState,
    waiters: Waiter[],
    decided: RoundOutcome,
  ): void {
    const { now, verdicts } = decided;
    for (const [i, waiter] of waiters.entries()) {
      const refused = new Set<NeedScope>();
      const leases: HeldLease[] = [];
      let again = false;
      for (const s of NEED_SCOPES) {
        const scope = scopeOf(waiter.need, s);
        const verdict = verdicts.get(scope)!;
        const n = amountOf(waiter.need, s);
        // A grant counted as used at once is this round's only: nobody else takes from it.
        const lease = !verdict.served.has(i)
          ? null
          : decided.granted.find((l) =>
            l.direct && l.scope === scope && l.granted - l.taken >= n
          ) ?? this.#usable(state, waiter.need, s, now);
        if (lease) leases.push(lease);
        else if (verdict.served.has(i)) again = true;
        else if (verdict.deferred && this.#mayWait(waiter)) again = true;
        else refused.add(s);
      }
      if (!again) {
        waiter.resolve(claimFromBlocks(this.ctx, waiter.need, { at: now, leases, refused }));
        continue;
      }
      setTimeout(() => {
        state.waiters.push(waiter);
        this.#startRound(projectId, state);
      }, DEFER_MS);
    }
  }

  #mayWait(waiter: Waiter): boolean {
    return !waiter.signal?.aborted && performance.now() - waiter.since < DEFER_LIMIT_MS;
  }

  /** Places to take beyond `waiting` payouts: about two seconds of the project's rate here. */
  #prefetch(projectId: string, waiting: number): bigint {
    const extra = BigInt(Math.max(0, this.#sizes.block(projectId) - waiting));
    return extra < MAX_PREFETCH ? extra : MAX_PREFETCH;
  }
}

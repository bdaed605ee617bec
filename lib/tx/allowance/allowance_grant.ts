/**
 * What one round of the leased allowance (`allowance.ts`) grants in one scope: the waiting
 * payouts that fit under the limit, in their order, and the block that holds their places plus a
 * few for the payouts expected next (never past the limit).
 */
import type { AllowanceScope } from "../../../kv/tx_allowance.ts";

/** What one payout takes, and the limits it is held to (`null`: the asset has no budget). */
export interface AllowanceNeed {
  asset: string;
  amount: bigint;
  limits: { day: bigint; failed: bigint; asset: bigint | null };
}

/** A payout's places, held until its reservation commits or gives up. */
export interface AllowanceClaim {
  /** When the places were taken: the reservation's time, inside every block it took from. */
  at: number;
  /** Scopes without room (nothing is held in them). */
  refused: Set<NeedScope>;
  /** The reservation committed: its places are used. */
  commit(): void;
  /** The reservation did not commit: its places go back. */
  release(): void;
  /**
   * Its places are not taken yet: the reservation counts them in its own commit
   * (`allowance_fold.ts`), as of `at`.
   */
  folded?: true;
}

/** The scopes a payout's need refers to, in the order of their checks. */
export type NeedScope = "day" | "asset" | "failed";

/** Every scope of a need, in the order of the checks. */
export const NEED_SCOPES: readonly NeedScope[] = ["day", "asset", "failed"];

/** What a round decided for one scope. */
export interface ScopeVerdict {
  /** Waiters (by index) with a place in the new block. */
  served: Set<number>;
  /** Other instances hold open blocks that may come back: the others wait for them. */
  deferred: boolean;
}

/** The ledger scope of a need's scope. */
export function scopeOf(need: Pick<AllowanceNeed, "asset">, scope: NeedScope): AllowanceScope {
  return scope === "asset" ? `asset:${need.asset}` : scope;
}

/** What a need takes in one scope: its amount in the asset's, one place in the others. */
export function amountOf(need: AllowanceNeed, scope: NeedScope): bigint {
  return scope === "asset" ? need.amount : 1n;
}

/** A need's limit in one scope (null: none, an asset without a budget). */
export function limitOf(need: AllowanceNeed, scope: NeedScope): bigint | null {
  return need.limits[scope];
}

/**
 * Whether a block granted under `granted` (the lowest limit its grant was judged against) may
 * serve a payout held to `limit`: only when it was not granted under a higher one. A lowered
 * budget so binds the payouts judged under it at once: they take nothing from blocks granted
 * before, which the next round settles, and their places are judged again under it.
 */
export function grantedWithin(granted: bigint | null, limit: bigint | null): boolean {
  return limit === null || (granted !== null && granted <= limit);
}

/** The need's scope a ledger scope stands for. */
export function needScopeOf(scope: AllowanceScope): NeedScope {
  return scope.startsWith("asset:") ? "asset" : scope as NeedScope;
}

/**
 * Which of `needs` (by index; those of other scopes are passed over) fit in `scope` after `used`,
 * in order, and the block to grant: their places and `prefetch` more (times the largest amount in
 * an asset's scope) when all fit, never past the limit. The others wait (`deferred`) when other
 * instances hold open blocks that may give places back. `limit`: the lowest of their limits, the
 * one the grant is judged against (null: none).
 */
export function decideGrant(
  scope: AllowanceScope,
  needs: readonly AllowanceNeed[],
  input: { used: bigint; othersOpen: boolean; prefetch: bigint },
): {
  served: Set<number>;
  deferred: boolean;
  grant: bigint;
  want: bigint;
  all: boolean;
  limit: bigint | null;
} {
  const s = needScopeOf(scope);
  const mine = needs.map((need, i) => ({ need, i })).filter(({ need }) =>
    scopeOf(need, s) === scope
  );
  const limits = mine.map(({ need }) => limitOf(need, s)).filter((l): l is bigint => l !== null);
  const limit = limits.length ? minBig(...limits) : null;
  const room = limit === null ? null : limit - input.used;
  const served = new Set<number>();
  let want = 0n;
  for (const { need, i } of mine) {
    const n = amountOf(need, s);
    if (room !== null && want + n > room) break;
    want += n;
    served.add(i);
  }
  const all = served.size === mine.length;
  const deferred = !all && input.othersOpen;
  if (want === 0n) return { served, deferred, grant: 0n, want, all, limit };
  const largest = mine.reduce((max, { need }) => {
    const n = amountOf(need, s);
    return n > max ? n : max;
  }, 0n);
  const extra = all ? input.prefetch * largest : 0n;
  const grant = room === null ? want + extra : minBig(want + extra, room);
  return { served, deferred, grant, want, all, limit };
}

function minBig(...values: bigint[]): bigint {
  return values.reduce((a, b) => (a < b ? a : b));
}

/**
 * One round of the leased allowance (`allowance.ts` says why the limits stay exact): a commit per
 * project, checked on the ledgers of the scopes it looks at and on the previous version's lists.
 *
 * | Part        | Rule                                                                            |
 * | ----------- | ------------------------------------------------------------------------------- |
 * | Settles     | the instance's blocks being closed                                              |
 * | Counts      | other instances' lost blocks, whole                                             |
 * | Grants      | new blocks for the waiting payouts that fit                                     |
 * | Exact grant | Saving for a project paying now and then: a grant of exactly the waiting        |
 * |             | payouts' places (no places ahead) goes straight into its bucket as used,        |
 * |             | instead of a block settled later; a payout that then does not commit gives its  |
 * |             | place back like a failed one.                                                   |
 * | Releases    | The released counters (a list read per scope) are read only when the payouts do |
 * |             | not all fit without them (what they give back only lowers the count), or every  |
 * |             | `RELEASES_READ_MS` to delete those of buckets out of the window.                |
 */
import type { Clock } from "../../../core/clock.ts";
import { commitWithRetry, RETRY } from "../../../core/commit_retry.ts";
import { ulid } from "../../../core/ids.ts";
import {
  addToBucket,
  allowanceKey,
  type AllowanceLedger,
  type AllowanceScope,
  bucketEnd,
  bucketOf,
  getReleased,
  ledgerCount,
  releasedKey,
  scopeTiming,
  settleLedger,
} from "../../../kv/tx_allowance.ts";
import type { UsageWindow } from "../../../kv/tx_usage.ts";
import {
  isFenced,
  previousVersionUsage,
  previousWindowKey,
  reservationsOf,
  setDayFence,
} from "../../migrations/previous_windows.ts";
import { type AllowanceNeed, decideGrant, type ScopeVerdict } from "./allowance_grant.ts";

/** How long a block is used before it is settled. */
export const LEASE_MS = 2_000;
/** Past a block's end by this much its holder is taken to be gone (clocks differ a little). */
export const LEASE_GRACE_MS = 5_000;
/** How often a project's round reads the released counters at least, to delete the dead ones. */
export const RELEASES_READ_MS = 10 * 60_000;

/** A block this instance holds. */
export interface HeldLease {
  id: string;
  projectId: string;
  scope: AllowanceScope;
  b: number;
  until: number;
  granted: bigint;
  /** The lowest limit its grant was judged against (null: none): it serves no lower one. */
  limit: bigint | null;
  /** Taken by claims, committed or not yet. */
  taken: bigint;
  lastUse: number;
  /** A round is settling it: no payout takes from it any more. */
  closing: boolean;
  settled: boolean;
  /** Granted for exactly its round's payouts and counted as used at once (nothing to settle). */
  direct?: boolean;
}

/** What a round decided: its time, each scope's verdict on the needs, and the blocks granted. */
export interface RoundOutcome {
  now: number;
  verdicts: Map<AllowanceScope, ScopeVerdict>;
  granted: HeldLease[];
  /** The released counters were read (and the dead ones deleted). */
  readReleases: boolean;
}

/**
 * Settles `closing` (this instance's blocks of `scopes`) and grants blocks for `needs` (in their
 * order), `prefetch` places more when they all fit, in one checked commit retried on conflicts.
 */
export async function commitRound(
  ctx: { kv: Deno.Kv; clock: Clock },
  input: {
    projectId: string;
    holder: string;
    scopes: AllowanceScope[];
    closing: readonly HeldLease[];
    needs: readonly AllowanceNeed[];
    prefetch: bigint;
    /** Read the released counters whatever the count. */
    readReleases: boolean;
  },
): Promise<RoundOutcome> {
  const { kv } = ctx;
  const { projectId, scopes } = input;
  return await commitWithRetry("take transaction allowance", async () => {
    const now = ctx.clock.now();
    // One read: the ledgers, then the previous version's lists (at most 6 keys).
    const read = await kv.getMany([
      ...scopes.map((scope) => allowanceKey(projectId, scope)),
      ...scopes.map((scope) => previousWindowKey(projectId, scope)),
    ]);
    const entries = read.slice(0, scopes.length) as Deno.KvEntryMaybe<AllowanceLedger>[];
    const previous = read.slice(scopes.length);
    const op = kv.atomic().check(...read);
    const verdicts = new Map<AllowanceScope, ScopeVerdict>();
    const granted: HeldLease[] = [];
    let readReleases = input.readReleases;
    for (const [i, scope] of scopes.entries()) {
      const previousList = previous[i]!.value as UsageWindow | null;
      if (scope === "day" && !isFenced(previousList)) {
        // Before this version takes anything, the previous one stops paying (lib/migrations/previous_windows.ts).
        setDayFence(op, projectId, reservationsOf(previousList, now - scopeTiming(scope).windowMs));
      }
      const decide = (released: ReadonlyMap<number, bigint>) =>
        decideScope(scope, {
          stored: entries[i]!.value,
          previous: previousList,
          closing: input.closing.filter((lease) => lease.scope === scope),
          released,
          needs: input.needs,
          holder: input.holder,
          prefetch: input.prefetch,
          now,
        });
      // Without the released counters the count is too high, never too low: enough when all fit.
      let round = decide(new Map());
      if (readReleases || !round.decided.all) {
        readReleases = true;
        round = decide(await getReleased(kv, projectId, scope));
        for (const b of round.deadReleases) op.delete(releasedKey(projectId, scope, b));
      }
      const { ledger, decided } = round;
      verdicts.set(scope, { served: decided.served, deferred: decided.deferred });
      if (decided.grant > 0n) {
        const b = bucketOf(scope, now);
        const direct = decided.grant === decided.want;
        const lease: HeldLease = {
          id: ulid(now),
          projectId,
          scope,
          b,
          until: Math.min(now + LEASE_MS, bucketEnd(scope, b) - 1),
          granted: decided.grant,
          limit: decided.limit,
          taken: 0n,
          lastUse: now,
          closing: direct,
          settled: direct,
          direct,
        };
        if (direct) addToBucket(ledger, b, lease.granted, now);
        else {
          ledger.leases.push({
            id: lease.id,
            holder: input.holder,
            b,
            granted: lease.granted,
            until: lease.until,
          });
        }
        granted.push(lease);
      }
      op.set(allowanceKey(projectId, scope), ledger, { expireIn: ledgerKeptMs(scope) });
    }
    if (!(await op.commit()).ok) return RETRY;
    return { now, verdicts, granted, readReleases };
  });
}

/**
 * One scope's decision in a round: the ledger as stored with this instance's `closing` blocks
 * settled and lost blocks counted, and what `decideGrant` grants `needs` against its count (with
 * the previous version's list and the `released` counters given).
 */
export function decideScope(
  scope: AllowanceScope,
  input: {
    stored: AllowanceLedger | null;
    previous: UsageWindow | null;
    closing: readonly HeldLease[];
    released: ReadonlyMap<number, bigint>;
    needs: readonly AllowanceNeed[];
    holder: string;
    prefetch: bigint;
    now: number;
  },
): { ledger: AllowanceLedger; deadReleases: number[]; decided: ReturnType<typeof decideGrant> } {
  const { now, released } = input;
  const { ledger, deadReleases } = settleLedger(scope, input.stored, {
    own: input.closing,
    released,
    lostBefore: now - LEASE_GRACE_MS,
    now,
  });
  const used = ledgerCount(scope, ledger, released, now) +
    previousVersionUsage(scope, input.previous, now);
  const decided = decideGrant(scope, input.needs, {
    used,
    othersOpen: ledger.leases.some((l) =>
      l.holder !== input.holder && l.until + LEASE_GRACE_MS >= now
    ),
    prefetch: input.prefetch,
  });
  return { ledger, deadReleases, decided };
}

/** How long a scope's ledger is kept after its last write: its window, a bucket and a block. */
export function ledgerKeptMs(scope: AllowanceScope): number {
  const { windowMs, bucketMs } = scopeTiming(scope);
  return windowMs + bucketMs + LEASE_MS;
}

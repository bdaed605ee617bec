/**
 * One round of the leased allowance (`allowance.ts` says why the limits stay exact): a commit per
 * project, checked on the ledgers of the scopes it looks at and on the previous version's lists,
 * that settles the instance's blocks being closed, counts other instances' lost blocks whole,
 * and grants new blocks for the waiting payouts that fit.
 */
import type { Clock } from "../../core/clock.ts";
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { ulid } from "../../core/ids.ts";
import {
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
} from "../../kv/tx_allowance.ts";
import { previousVersionUsage, previousWindowKey } from "./previous_windows.ts";
import { type AllowanceNeed, decideGrant, type ScopeVerdict } from "./allowance_grant.ts";

/** How long a block is used before it is settled. */
export const LEASE_MS = 2_000;
/** Past a block's end by this much its holder is taken to be gone (clocks differ a little). */
export const LEASE_GRACE_MS = 5_000;

/** A block this instance holds. */
export interface HeldLease {
  id: string;
  projectId: string;
  scope: AllowanceScope;
  b: number;
  until: number;
  granted: bigint;
  /** Taken by claims, committed or not yet. */
  taken: bigint;
  lastUse: number;
  /** A round is settling it: no payout takes from it any more. */
  closing: boolean;
  settled: boolean;
}

/** What a round decided: its time, each scope's verdict on the needs, and the blocks granted. */
export interface RoundOutcome {
  now: number;
  verdicts: Map<AllowanceScope, ScopeVerdict>;
  granted: HeldLease[];
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
  },
): Promise<RoundOutcome> {
  const { kv } = ctx;
  const { projectId, scopes } = input;
  return await commitWithRetry("take transaction allowance", async () => {
    const now = ctx.clock.now();
    const entries = await kv.getMany<AllowanceLedger[]>(
      scopes.map((scope) => allowanceKey(projectId, scope)),
    );
    const previous = await kv.getMany(scopes.map((scope) => previousWindowKey(projectId, scope)));
    const op = kv.atomic().check(...entries, ...previous);
    const verdicts = new Map<AllowanceScope, ScopeVerdict>();
    const granted: HeldLease[] = [];
    for (const [i, scope] of scopes.entries()) {
      const released = await getReleased(kv, projectId, scope);
      const { ledger, deadReleases } = settleLedger(scope, entries[i]!.value, {
        own: input.closing.filter((lease) => lease.scope === scope),
        released,
        lostBefore: now - LEASE_GRACE_MS,
        now,
      });
      for (const b of deadReleases) op.delete(releasedKey(projectId, scope, b));
      const used = ledgerCount(scope, ledger, released, now) +
        previousVersionUsage(scope, previous[i]!.value, now);
      const decided = decideGrant(scope, input.needs, {
        used,
        othersOpen: ledger.leases.some((l) =>
          l.holder !== input.holder && l.until + LEASE_GRACE_MS >= now
        ),
        prefetch: input.prefetch,
      });
      verdicts.set(scope, { served: decided.served, deferred: decided.deferred });
      if (decided.grant > 0n) {
        const b = bucketOf(scope, now);
        const lease: HeldLease = {
          id: ulid(now),
          projectId,
          scope,
          b,
          until: Math.min(now + LEASE_MS, bucketEnd(scope, b) - 1),
          granted: decided.grant,
          taken: 0n,
          lastUse: now,
          closing: false,
          settled: false,
        };
        ledger.leases.push({
          id: lease.id,
          holder: input.holder,
          b,
          granted: lease.granted,
          until: lease.until,
        });
        granted.push(lease);
      }
      const { windowMs, bucketMs } = scopeTiming(scope);
      op.set(allowanceKey(projectId, scope), ledger, { expireIn: windowMs + bucketMs + LEASE_MS });
    }
    if (!(await op.commit()).ok) return RETRY;
    return { now, verdicts, granted };
  });
}

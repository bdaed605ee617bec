/**
 * A payout's places taken from blocks this instance holds (`allowance.ts`): held until its
 * reservation commits (used) or gives up (back to their blocks, or, from a block a round settled
 * meanwhile, given back to the ledger's bucket like a failed payout's); and the wait for a round's
 * places, which ends at the payout's deadline.
 */
import type { Clock } from "../../../core/clock.ts";
import { log } from "../../../core/log.ts";
import { giveBackOnce } from "../../../kv/tx_allowance.ts";
import { ulid } from "../../../core/ids.ts";
import {
  type AllowanceClaim,
  type AllowanceNeed,
  amountOf,
  type NeedScope,
  needScopeOf,
} from "./allowance_grant.ts";
import type { HeldLease } from "./allowance_round.ts";
import { abortable } from "../../../core/deadline.ts";
import { notReservedInTime, reservationWaitSignal } from "../rpc/timing.ts";

/**
 * The claim a round will answer, waited for until `deadline` (the payout's) aborts
 * (`reservationWaitSignal`): a round may outlast it (a slow or busy store), and the payout is
 * answered then (`notReservedInTime`), its places given back as they come.
 */
export function claimBy(
  claimed: Promise<AllowanceClaim>,
  deadline: AbortSignal | undefined,
): Promise<AllowanceClaim> {
  const signal = reservationWaitSignal(deadline);
  if (!signal) return claimed;
  return abortable(claimed, signal).catch((error) => {
    if (!signal.aborted) throw error;
    claimed.then((claim) => claim.release(), () => {});
    throw notReservedInTime();
  });
}

/** Takes `need`'s places at `at` from `leases` (one per scope it has room in). */
export function claimFromBlocks(
  ctx: { kv: Deno.Kv; clock: Clock },
  need: AllowanceNeed,
  input: { at: number; leases: HeldLease[]; refused: Set<NeedScope> },
): AllowanceClaim {
  const { at, refused } = input;
  const parts = input.leases.map((lease) => ({
    lease,
    n: amountOf(need, needScopeOf(lease.scope)),
  }));
  for (const { lease, n } of parts) {
    lease.taken += n;
    lease.lastUse = Math.max(lease.lastUse, at);
  }
  let done = false;
  return {
    at,
    refused,
    commit: () => {
      done = true;
    },
    release: () => {
      if (done) return;
      done = true;
      for (const { lease, n } of parts) {
        if (!lease.closing) lease.taken -= n;
        // Counted as used by the round settling its block: given back like a failed payout's.
        else giveBack(ctx, lease, n, at);
      }
    },
  };
}

function giveBack(ctx: { kv: Deno.Kv; clock: Clock }, lease: HeldLease, n: bigint, at: number) {
  const { projectId, scope } = lease;
  const now = ctx.clock.now();
  // Lost, it only counts a place too many until its bucket leaves the window.
  giveBackOnce(ctx.kv, { projectId, scope, at, n, now, id: ulid(now) }).catch((error) =>
    log("warn", "Cannot give back a transaction limit's place", { projectId, error })
  );
}

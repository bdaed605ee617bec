/**
 * A quiet project's places taken in its payout's own reservation commit (`reserve.ts`) instead of
 * in a round of their own just before it (`allowance.ts`): one commit and one read fewer for a
 * project paying now and then, which is most projects most of the time.
 *
 * Exactness. The reservation's commit then does what a round granting exactly this payout's places
 * does (`allowance_round.ts`, a `direct` grant): it reads each scope's ledger and the previous
 * version's list, counts other instances' lost blocks whole, checks that the payout fits, adds its
 * places to the buckets of its time as used, and is checked against every record it read. A
 * concurrent round or fold on any instance changes a ledger, so one of the two commits fails its
 * check and reads again. And since the places are written by the commit that reserves the key, a
 * payout that does not reserve takes none (there is nothing to give back).
 *
 * Only when nothing else is simpler: this instance holds no block of the project and it paid less
 * than about twice a second here (`TxAllowances.foldable`); otherwise its blocks serve the payout
 * from memory. A round decides instead whenever the fold would have to do more than count: the
 * previous version's day list is not fenced yet (the round writes the fence), or the payout does
 * not fit in a scope without reading the released counters or waiting for other instances'
 * blocks. On a local store file only: the commit checks 11 records, past a remote store's 10.
 */
import {
  addToBucket,
  allowanceKey,
  type AllowanceLedger,
  type AllowanceScope,
  bucketOf,
} from "../../kv/tx_allowance.ts";
import type { UsageWindow } from "../../kv/tx_usage.ts";
import {
  type AllowanceClaim,
  type AllowanceNeed,
  NEED_SCOPES,
  scopeOf,
} from "./allowance_grant.ts";
import { decideScope, ledgerKeptMs } from "./allowance_round.ts";
import { isFenced, previousWindowKey } from "./previous_windows.ts";

/** Places taken by the reservation's own commit: a claim, and the writes that take them. */
export interface FoldedPlaces extends AllowanceClaim {
  /** Adds the ledgers' checks and writes to the reservation's commit. */
  addTo(op: Deno.AtomicOperation): void;
}

/** The records a folded payout reads beside its reservation's: each scope's ledger, then the previous version's lists. */
export function foldKeys(projectId: string, need: AllowanceNeed): Deno.KvKey[] {
  const scopes = NEED_SCOPES.map((s) => scopeOf(need, s));
  return [
    ...scopes.map((scope) => allowanceKey(projectId, scope)),
    ...scopes.map((scope) => previousWindowKey(projectId, scope)),
  ];
}

/**
 * The payout's places from the records read as `entries` (`foldKeys`' order) at `now`, or null
 * when a round must decide instead (above).
 */
export function foldPlaces(input: {
  projectId: string;
  need: AllowanceNeed;
  entries: Deno.KvEntryMaybe<unknown>[];
  holder: string;
  now: number;
}): FoldedPlaces | null {
  const { projectId, need, entries, now } = input;
  const scopes = NEED_SCOPES.map((s) => scopeOf(need, s));
  const ledgers: Array<{ scope: AllowanceScope; ledger: AllowanceLedger }> = [];
  for (const [i, scope] of scopes.entries()) {
    const previous = entries[scopes.length + i]!.value as UsageWindow | null;
    if (scope === "day" && !isFenced(previous)) return null;
    const { ledger, decided } = decideScope(scope, {
      stored: entries[i]!.value as AllowanceLedger | null,
      previous,
      closing: [],
      released: new Map(),
      needs: [need],
      holder: input.holder,
      prefetch: 0n,
      now,
    });
    if (!decided.all) return null;
    addToBucket(ledger, bucketOf(scope, now), decided.grant, now);
    ledgers.push({ scope, ledger });
  }
  return {
    at: now,
    refused: new Set(),
    // Written (or not) with the reservation: nothing to keep or give back in memory.
    commit: () => {},
    release: () => {},
    addTo: (op) => {
      op.check(...entries);
      for (const { scope, ledger } of ledgers) {
        op.set(allowanceKey(projectId, scope), ledger, { expireIn: ledgerKeptMs(scope) });
      }
    },
  };
}

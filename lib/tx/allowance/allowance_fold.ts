/**
 * A payout's places in the project-wide limits counted in its reservation's own commit, for a
 * project paying now and then on this instance (no block with room held, no round nor other fold
 * under way: `TxAllowances.take` answers a `folded` claim): what a round would grant it, exactly
 * its places counted as
 * used at once, is written into each scope's ledger by the reservation, checked on each ledger, so
 * the payout waits for one commit instead of a round's and then its reservation's.
 *
 * It stays exact as a round does (`allowance.ts`): the ledgers are read with the reservation's
 * records and the commit is checked on them, so a round or another fold in between fails it, and it
 * counts what the previous version's lists hold. It only folds when the places fit in the ledgers
 * as stored (without the released counters, which only lower the count) and the previous version
 * is fenced out (`previous_windows.ts`: then its lists change only with a ledger, moved by the
 * migration's sweep, so they are read and not checked); otherwise the reservation takes its places
 * from a round. A reservation that does not commit counted nothing: there is nothing to give back.
 */
import {
  addToBucket,
  allowanceKey,
  type AllowanceLedger,
  bucketOf,
} from "../../../kv/tx_allowance.ts";
import type { UsageWindow } from "../../../kv/tx_usage.ts";
import { type AllowanceNeed, NEED_SCOPES, scopeOf } from "./allowance_grant.ts";
import { decideScope, ledgerKeptMs } from "./allowance_round.ts";
import { isFenced, previousWindowKey } from "../../migrations/previous_windows.ts";

/**
 * The records a fold of a payout of `asset` reads: each scope's ledger, then each one's
 * previous-version list.
 */
export function foldKeys(projectId: string, asset: string): Deno.KvKey[] {
  const scopes = NEED_SCOPES.map((s) => scopeOf({ asset }, s));
  return [
    ...scopes.map((scope) => allowanceKey(projectId, scope)),
    ...scopes.map((scope) => previousWindowKey(projectId, scope)),
  ];
}

/**
 * Adds to `op` the need's places counted as used at `at` in each scope's ledger (`entries`, read
 * as `foldKeys` orders them), each checked; false, adding nothing, when they do not all fit as
 * stored or the previous version is not fenced out: a round must decide.
 */
export function addFoldedPlaces(
  op: Deno.AtomicOperation,
  need: AllowanceNeed,
  input: {
    projectId: string;
    entries: Deno.KvEntryMaybe<unknown>[];
    holder: string;
    at: number;
  },
): boolean {
  const { projectId, entries, holder, at: now } = input;
  const ledgers = entries.slice(0, NEED_SCOPES.length) as Deno.KvEntryMaybe<AllowanceLedger>[];
  const previous = entries.slice(NEED_SCOPES.length).map((e) => e.value as UsageWindow | null);
  if (!isFenced(previous[NEED_SCOPES.indexOf("day")] ?? null)) return false;
  const writes: Array<() => void> = [];
  for (const [i, s] of NEED_SCOPES.entries()) {
    const scope = scopeOf(need, s);
    const { ledger, decided } = decideScope(scope, {
      stored: ledgers[i]!.value,
      previous: previous[i]!,
      closing: [],
      released: new Map(),
      needs: [need],
      holder,
      prefetch: 0n,
      now,
    });
    if (!decided.all) return false;
    addToBucket(ledger, bucketOf(scope, now), decided.grant, now);
    writes.push(() => {
      op.check(ledgers[i]!).set(allowanceKey(projectId, scope), ledger, {
        expireIn: ledgerKeptMs(scope),
      });
    });
  }
  for (const write of writes) write();
  return true;
}

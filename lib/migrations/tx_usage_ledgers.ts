/**
 * The project-wide transaction limits were lists of reservation times (`["tx_usage_day", p]`,
 * `["tx_usage_failed", p]`, `["tx_usage_asset", p, asset]`); they are now ledgers of time buckets
 * and leases (`kv/tx_allowance.ts`). Each list's entries still in their window are added to the
 * bucket of their time and the list is deleted, in one commit checked on both records, so each
 * entry is counted once: a settlement that gives an entry back later releases it from the bucket
 * of its time, where it now is. Instances of the previous version keep adding to the lists until
 * the last of them stops, so this also runs in the minute sweep; meanwhile every grant of
 * allowance counts what the lists hold (`previous_windows.ts`). The per-recipient and
 * per-player lists keep their shape.
 *
 * An instance of the previous version checks its reservations against the lists alone, which no
 * longer hold what was moved nor anything this version takes; so a day list is not deleted but
 * left as the fence (`previous_windows.ts`) that makes the previous version refuse every
 * payout of the project rather than pass a limit during a rolling deploy's overlap.
 */
import {
  addToBucket,
  allowanceKey,
  type AllowanceLedger,
  type AllowanceScope,
  bucketOf,
  copyLedger,
  scopeTiming,
} from "../../kv/tx_allowance.ts";
import type { UsageWindow } from "../../kv/tx_usage.ts";
import type { MigrationDeps, MigrationStep } from "./step.ts";
import { isFenced, reservationsOf, setDayFence } from "./previous_windows.ts";

const OLD_PREFIXES = ["tx_usage_day", "tx_usage_failed", "tx_usage_asset"] as const;

/** Moves every old list of the project-wide limits into its scope's ledger. */
export const moveTxUsageIntoLedgers: MigrationStep = async (deps) => {
  let changed = 0;
  for (const prefix of OLD_PREFIXES) {
    for await (const entry of deps.kv.list<UsageWindow>({ prefix: [prefix] })) {
      if (await moveWindow(deps, entry)) changed++;
    }
  }
  return { changed, complete: true };
};

function scopeOfKey(key: Deno.KvKey): { projectId: string; scope: AllowanceScope } {
  const projectId = String(key[1]);
  if (key[0] === "tx_usage_day") return { projectId, scope: "day" };
  if (key[0] === "tx_usage_failed") return { projectId, scope: "failed" };
  return { projectId, scope: `asset:${String(key[2])}` };
}

async function moveWindow(
  { kv, clock }: MigrationDeps,
  found: Deno.KvEntry<UsageWindow>,
): Promise<boolean> {
  const { projectId, scope } = scopeOfKey(found.key);
  const { windowMs, bucketMs } = scopeTiming(scope);
  for (;;) {
    const [window, ledgerEntry] = await kv.getMany<[UsageWindow, AllowanceLedger]>([
      found.key,
      allowanceKey(projectId, scope),
    ]);
    if (!window!.value) return false;
    const now = clock.now();
    const live = reservationsOf(window!.value, now - windowMs);
    const fence = scope === "day";
    if (fence && live.times.length === 0 && isFenced(window!.value)) return false;
    const ledger = copyLedger(ledgerEntry!.value);
    const amounts = scope.startsWith("asset:");
    live.times.forEach((at, i) => {
      addToBucket(ledger, bucketOf(scope, at), amounts ? live.amounts[i] ?? 0n : 1n, at);
    });
    const op = kv.atomic().check(window!, ledgerEntry!);
    if (fence) setDayFence(op, projectId, { times: [], amounts: [] });
    else op.delete(found.key);
    if (live.times.length > 0) {
      op.set(allowanceKey(projectId, scope), ledger, { expireIn: windowMs + bucketMs });
    }
    if ((await op.commit()).ok) return true;
  }
}

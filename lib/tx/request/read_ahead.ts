/**
 * What a payout's reservation reads besides the checks' records, read beside them in the same round
 * trip: its recipient's and its player's windows, the ledgers its places may be counted in
 * (`allowance_fold.ts`) and, when its commit counts the request, the project's request counters.
 * The windows' keys need the recipient, which the player's link decides: they are read for the
 * recipient this instance found last for the same player or wallet (`../recent_links.ts`), and the
 * reservation takes the read only when the checks resolved that same recipient and asset.
 */
import type { TxContext } from "../runtime.ts";
import type { TxKind } from "../../../core/events.ts";
import { txPlayerUsageKey, txRecipientUsageKey } from "../../../kv/tx_usage.ts";
import { foldKeys } from "../allowance/allowance_fold.ts";
import { getManyAtOnce } from "../../../kv/get_many.ts";
import { countsAgainstLimits } from "./limits.ts";
import type { PayoutTarget, Recipient } from "../recent_links.ts";

/** The records read ahead for a payout of `asset` to `recipient`. */
export interface ReadAhead extends Recipient, Omit<FoldRead, "own"> {
  asset: string;
  /** The recipient's window, then the player's when there is one (`windowKeys`). */
  windows: Deno.KvEntryMaybe<unknown>[];
}

/** The windows a payout to `to` is checked against: the recipient's, and its player's if any. */
export function windowKeys(projectId: string, to: Recipient): Deno.KvKey[] {
  return [
    txRecipientUsageKey(projectId, to.recipient),
    ...(to.userId !== null ? [txPlayerUsageKey(projectId, to.userId)] : []),
  ];
}

/** The ledgers a payout of `kind` and `asset` may count its places in; none for a withdrawal. */
function ledgerKeys(projectId: string, kind: TxKind, asset: string): Deno.KvKey[] {
  return countsAgainstLimits(kind) ? foldKeys(projectId, asset) : [];
}

/** What `readWithFolds` read: the caller's own records, and those a reservation counts in. */
export interface FoldRead {
  own: Deno.KvEntryMaybe<unknown>[];
  /** `ledgerKeys`' records; null when there are none (a withdrawal takes no places). */
  ledgers: Deno.KvEntryMaybe<unknown>[] | null;
  /** The project's request counters, when they were asked for; else null. */
  counters: Deno.KvEntryMaybe<unknown> | null;
}

/**
 * Reads `own`, the ledgers a payout of `kind` and `asset` may count its places in, and the request
 * counters (`counters`: their key, or null), all at once.
 */
export async function readWithFolds(
  ctx: TxContext,
  input: {
    projectId: string;
    kind: TxKind;
    asset: string;
    own: readonly Deno.KvKey[];
    counters: Deno.KvKey | null;
  },
): Promise<FoldRead> {
  const { own, counters } = input;
  const ledgers = ledgerKeys(input.projectId, input.kind, input.asset);
  const read = await getManyAtOnce(ctx.kv, [
    ...own,
    ...ledgers,
    ...(counters ? [counters] : []),
  ]);
  const afterLedgers = own.length + ledgers.length;
  return {
    own: read.slice(0, own.length),
    ledgers: ledgers.length ? read.slice(own.length, afterLedgers) : null,
    counters: counters ? read[afterLedgers]! : null,
  };
}

/**
 * Reads ahead for a payout of the project to `to` (null: no target worth a guess) in `asset` (null:
 * not known); null when its recipient cannot be guessed. `counters`: the request counters' key.
 */
export async function readAhead(
  ctx: TxContext,
  input: {
    projectId: string;
    kind: TxKind;
    to: PayoutTarget | null;
    asset: string | null;
    counters: Deno.KvKey | null;
  },
): Promise<ReadAhead | null> {
  const { projectId, to, asset, counters } = input;
  const guess = to && ctx.tx.links.guess(projectId, to);
  if (!guess || asset === null) return null;
  const own = windowKeys(projectId, guess);
  const read = await readWithFolds(ctx, { projectId, kind: input.kind, asset, own, counters });
  return { ...guess, asset, windows: read.own, ledgers: read.ledgers, counters: read.counters };
}

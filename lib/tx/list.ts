/** The project's transaction list (`GET /v1/tx`): TxResults with what was asked, newest first. */
import { listTxRequests } from "../../kv/tx_requests.ts";
import { txResultOf } from "./lifecycle/result.ts";
import type { TxContext } from "./runtime.ts";
import type { TxResult } from "./lifecycle/result.ts";
import type { TxStatus } from "../../kv/tx_requests.ts";

/** A TxResult plus the request's amount, mint (null for SOL), recipient player, time and asker. */
interface TxListItem extends TxResult {
  /** The amount as sent, a decimal string in token units. */
  amount: string;
  mint: string | null;
  /** The recipient player at request time, or null. */
  userId: number | null;
  /** When the current attempt was requested (Unix ms); the list is ordered by it. */
  createdAt: number;
  /** The dashboard member who asked for a withdrawal; null for the routes' requests. */
  requestedBy: string | null;
}

/** One answer of the list route. */
interface TxListAnswer {
  transactions: TxListItem[];
  /** Cursor for the next (older) page; null once the oldest request was reached. */
  next: string | null;
}

/** Lists the project's requests newest first, optionally only those with `status`. */
export async function listTransactions(
  ctx: TxContext,
  projectId: string,
  query: { status?: TxStatus | undefined; after?: string | undefined; limit: number },
): Promise<TxListAnswer> {
  const page = await listTxRequests(ctx.kv, projectId, { ...query, now: ctx.clock.now() });
  return {
    transactions: page.records.map((record) => ({
      ...txResultOf(record),
      amount: record.body.amount,
      mint: record.body.mint,
      userId: record.recipientUserId,
      createdAt: record.usage.at,
      requestedBy: record.requestedBy ?? null,
    })),
    next: page.next,
  };
}

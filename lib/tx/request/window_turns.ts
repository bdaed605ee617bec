/**
 * A payout's turn on its hourly windows in this process, so payouts of one project to one player at
 * once commit at their first try instead of retrying against each other.
 *
 * | Concern | Rule                                                                                |
 * | ------- | ----------------------------------------------------------------------------------- |
 * | Why     | Every reservation writes its recipient's and its player's window (`limits.ts`),     |
 * |         | checked by its commit: payouts to one player at once (a game paying each of a       |
 * |         | player's rewards as it comes) all commit against the same records, one wins and the |
 * |         | others read again and retry, about n²/2 commits for n payouts (24 at once lost 163  |
 * |         | commits; 64 connections paying one player made 33 commits a payout).                |
 * | Turns   | Here they reserve one after another: each one's read comes after the previous one's |
 * |         | commit, so it commits at its first try. Instances still meet on these records       |
 * |         | through the commit's checks, as before.                                             |
 * | Waiting | Until the payout's deadline (`reservationWaitSignal`, as a wait for places is),     |
 * |         | then `notReservedInTime`: nothing was kept or sent.                                 |
 * | Order   | The recipient's turn is always taken before the player's, so two payouts never wait |
 * |         | for each other.                                                                     |
 * | Told    | Whether the payout waited for another's turn: then what it read ahead of its turn   |
 * |         | (`read_ahead.ts`) is older than that one's commit, and it reads again.              |
 */
import type { TxContext } from "../runtime.ts";
import type { CheckedRequest } from "./checks.ts";
import { type Deadline, notReservedInTime, reservationWaitSignal } from "../rpc/timing.ts";
import { keyId } from "../../../kv/key_ids.ts";
import { txPlayerUsageKey, txRecipientUsageKey } from "../../../kv/tx_usage.ts";

/**
 * Runs `reserve` once no other reservation of this process writes the request's windows, telling
 * it whether another one did when it asked.
 */
export async function inWindowTurn<T>(
  ctx: TxContext,
  request: CheckedRequest,
  deadline: Deadline | undefined,
  reserve: (waited: boolean) => Promise<T>,
): Promise<T> {
  const projectId = request.project.id;
  const windows = [txRecipientUsageKey(projectId, request.recipient)];
  if (request.recipientUserId !== null) {
    windows.push(txPlayerUsageKey(projectId, request.recipientUserId));
  }
  const signal = reservationWaitSignal(deadline?.signal);
  const waited = windows.some((window) => ctx.tx.windowTurns.busy(keyId(window)));
  let started = false;
  const turns = windows.reduceRight<() => Promise<T>>(
    (inner, window) => () => ctx.tx.windowTurns.run(keyId(window), inner, { signal }),
    () => {
      started = true;
      return reserve(waited);
    },
  );
  try {
    return await turns();
  } catch (error) {
    if (!started && signal?.aborted) throw notReservedInTime();
    throw error;
  }
}

/**
 * A reward moves with its payment: when the payment (the transaction request `reward:<key>`, sent
 * by the reward, `lib/tx/request/sender.ts`) settles, the commit that settles it (`transitions.ts`)
 * also applies the reward's `credit` (confirmed), `release` (failed; `expire` past its time) to
 * the reward, its indexes and held totals, with its `reward_*` event right after the `tx` event.
 * So a reward is `paid` as soon as its payment reads `confirmed`, and a failed payment's reward
 * is held again at once. The commit checks two more keys: the reward, and its player's holds.
 * The keys of a shared transaction are never rewards' (the batch route refuses their prefix, and
 * a reward's payment is sent alone), so a shared settlement's checks stay the keys' own.
 */
import type { ServiceEvent } from "../../../core/events.ts";
import { log } from "../../../core/log.ts";
import {
  addRewardMove,
  getRewardHoldsEntry,
  rewardKey,
  rewardOfTxKey,
  type RewardRecord,
} from "../../../kv/rewards.ts";
import type { TxRequestRecord } from "../../../kv/tx_requests.ts";
import {
  applyRewardEvent,
  paymentSettledEvent,
  rewardEventsOf,
} from "../lifecycle/lifecycle_rewards.ts";
import type { RewardEvent } from "../lifecycle/lifecycle.ts";
import type { TxContext } from "../runtime.ts";

/** A reward's move added to its payment's settlement. */
export interface RewardSettlement {
  /** Its events, recorded right after the payment's `tx` event. */
  events: ServiceEvent[];
  /** Logs the move, once the commit went through. */
  logMove: () => void;
}

/**
 * Adds, to `op`, the move of the reward that `settled` (a payment's record after its final event)
 * pays, checked on the reward and its player's holds as read now; null for a route's payment, or
 * a reward the table does not move from where it stands (already paid, cancelled or expired).
 */
export async function addRewardSettlement(
  ctx: TxContext,
  op: Deno.AtomicOperation,
  settled: TxRequestRecord,
  now: number,
): Promise<RewardSettlement | null> {
  const key = rewardOfTxKey(settled.key);
  if (key === null) return null;
  const entry = await ctx.kv.get<RewardRecord>(rewardKey(settled.projectId, key));
  const reward = entry.value;
  if (!reward) return null;
  const event = paymentSettledEvent(reward, settled, now);
  const next = event && applyRewardEvent(reward, settled, event, now);
  if (!event || !next) return null;
  const holds = await getRewardHoldsEntry(ctx.kv, settled.projectId, reward.userId);
  addRewardMove(op, settled.projectId, entry as Deno.KvEntry<RewardRecord>, next, holds);
  return {
    events: rewardEventsOf(reward, next, event),
    logMove: () => logRewardMove(settled.projectId, event, next),
  };
}

/** The log line of a reward's move, once committed. */
export function logRewardMove(projectId: string, event: RewardEvent, next: RewardRecord): void {
  log(next.status === "held" ? "warn" : "info", "Reward moved", {
    projectId,
    reward: next.key,
    event: event.type,
    status: next.status,
    waitingFor: next.waitingFor,
    error: next.error,
  });
}

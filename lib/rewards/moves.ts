/**
 * A reward's own moves of the lifecycle's table (`lib/tx/lifecycle/lifecycle.ts`): wait, cancel, expire,
 * release and credit. Each is one commit checked on the reward record (and on its player's holds,
 * which a final move gives back), with its event recorded in that same commit, so whichever of the
 * route, the reward's jobs and another instance gets there first decides, once. The `pay` move is
 * made by its payment's reservation, which the reward sends (`lib/tx/request/sender.ts`); release
 * and credit by its payment's settlement (`lib/tx/record/reward_settlement.ts`), and here only for
 * a payment a previous release's instance settled without them.
 */
import { ApiError } from "../../core/api_error.ts";
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { addAuditEntry, type AuditInput } from "../../kv/audit_log.ts";
import { linkByUserKey } from "../../kv/links.ts";
import { getMemberEntryUnder, type MemberRule } from "../../kv/members.ts";
import {
  addRewardMove,
  type RewardHolds,
  rewardHoldsKey,
  rewardKey,
  type RewardRecord,
  rewardTxKey,
} from "../../kv/rewards.ts";
import { liveTxRequest, txRequestKey, type TxRequestRecord } from "../../kv/tx_requests.ts";
import { commitWithEvents } from "../events/record.ts";
import type { RewardEvent } from "../tx/lifecycle/lifecycle.ts";
import { applyRewardEvent, rewardEventsOf } from "../tx/lifecycle/lifecycle_rewards.ts";
import { logRewardMove } from "../tx/record/reward_settlement.ts";
import type { TxContext } from "../tx/runtime.ts";

/** Which reward. */
export interface RewardRef {
  projectId: string;
  key: string;
}

/**
 * A move a dashboard member makes: their entry, which must pass `rule`, is checked by the move's
 * commit (a member removed or demoted meanwhile changes nothing), and `audit` recorded in it.
 */
export interface MemberMove {
  member: { address: string; rule: MemberRule };
  audit: (reward: RewardRecord) => AuditInput;
}

/** How a move ended. */
interface RewardMove {
  /** The reward as it stands afterwards (null when unknown). */
  reward: RewardRecord | null;
  /** True when this call moved it. */
  moved: boolean;
  /** A wait for a wallet found the player linked: nothing changed, pay it instead. */
  linked?: boolean;
}

/**
 * Applies the event `decide` picks from the reward and its payment as read (null: none) in one
 * checked commit. A wait for a wallet commits only while the player has none, checked on that, so
 * a link meanwhile (whose job pays the player's held rewards) is never missed. A member's move
 * (`by`) is also checked on their entry and audited in that commit.
 */
export async function moveReward(
  ctx: TxContext,
  ref: RewardRef,
  decide: (reward: RewardRecord, payment: TxRequestRecord | null) => RewardEvent | null,
  options: { by?: MemberMove } = {},
): Promise<RewardMove> {
  return await commitWithRetry("move the reward", async () => {
    const [entry, paymentEntry] = await ctx.kv.getMany<[RewardRecord, TxRequestRecord]>([
      rewardKey(ref.projectId, ref.key),
      txRequestKey(ref.projectId, rewardTxKey(ref.key)),
    ]);
    const reward = entry.value;
    if (!reward) return { reward: null, moved: false };
    const now = ctx.clock.now();
    const payment = liveTxRequest(paymentEntry.value, now);
    const event = decide(reward, payment);
    const next = event && applyRewardEvent(reward, payment, event, now);
    if (!event || !next) return { reward, moved: false };
    const [holds, link] = await ctx.kv.getMany<[RewardHolds, unknown]>([
      rewardHoldsKey(ref.projectId, reward.userId),
      linkByUserKey(ref.projectId, reward.userId),
    ]);
    const waitsForWallet = event.type === "wait" && event.waitingFor === "wallet";
    if (waitsForWallet && link.value !== null) return { reward, moved: false, linked: true };
    const op = ctx.kv.atomic();
    if (waitsForWallet) op.check(link);
    if (options.by) {
      op.check(await getMemberEntryUnder(ctx.kv, ref.projectId, options.by.member));
      addAuditEntry(op, options.by.audit(next));
    }
    addRewardMove(op, ref.projectId, entry as Deno.KvEntry<RewardRecord>, next, holds);
    const events = rewardEventsOf(reward, next, event);
    const committed = await commitWithEvents(ctx, op, { projectId: ref.projectId, events });
    if (!committed.ok) return RETRY;
    logRewardMove(ref.projectId, event, next);
    return { reward: next, moved: true };
  });
}

/**
 * Cancels a held reward (answered again the same once cancelled); 409 `reward_not_cancellable`
 * once its payment was reserved, or it was paid or expired; 404 `not_found` when unknown. The
 * game's API and a dashboard member (`by`) cancel through here.
 */
export async function cancelReward(
  ctx: TxContext,
  ref: RewardRef,
  options: { by?: MemberMove } = {},
): Promise<RewardRecord> {
  const { reward } = await moveReward(ctx, ref, () => ({ type: "cancel" }), options);
  if (!reward) throw new ApiError("not_found", "No reward has this key");
  if (reward.status !== "cancelled") {
    throw new ApiError("reward_not_cancellable", `The reward is ${reward.status}`);
  }
  return reward;
}

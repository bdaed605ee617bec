/**
 * Who sends a transaction request, and step 1 checked again on their stored record when the
 * request is checked and when it is reserved: an API key (the routes), a dashboard member
 * withdrawing (`withdraw.ts`), or a reward paying its player (`lib/rewards/`): the reward's
 * record is then the one the reservation's commit checks, and moves (`addSenderMove`), so a reward
 * cancelled or expired before it is never paid.
 */
import { apiKeyKey, type ApiKeyRecord } from "../../../kv/api_keys.ts";
import { type Member, memberKey } from "../../../kv/members.ts";
import type { Project } from "../../../kv/projects.ts";
import { insufficientRole, roleAllows } from "../../auth/roles.ts";
import { ApiError, projectNotFound } from "../../../core/api_error.ts";
import { rewardKey, type RewardRecord } from "../../../kv/rewards.ts";
import type { TxRequestRecord } from "../../../kv/tx_requests.ts";
import { applyRewardEvent } from "../lifecycle/lifecycle_rewards.ts";

/** Who sends a request: an API key, a dashboard member withdrawing, or a reward (its key). */
export type TxSender = { keyId: string } | { member: string } | { reward: string };

/** The store key of a sender's record, which the reservation's commit checks. */
export function senderKey(projectId: string, sender: TxSender): Deno.KvKey {
  if ("keyId" in sender) return apiKeyKey(projectId, sender.keyId);
  if ("member" in sender) return memberKey(projectId, sender.member);
  return rewardKey(projectId, sender.reward);
}

/** A reward's payment found it paid, cancelled or expired (or gone): it is not sent. */
export class RewardNotPayableError extends Error {
  constructor(readonly key: string) {
    super(`Cannot pay reward ${key}: it was paid, cancelled or expired`);
    this.name = "RewardNotPayableError";
  }
}

/**
 * Step 1 on the stored records (`record` is the one at `senderKey`): an API key must be active and
 * its project not deleted (401 `unauthorized`: what the guard checked from its cache); a member
 * withdrawing must still be on the active project's team (404 `project_not_found`) with a role
 * that may withdraw (403 `insufficient_role`).
 */
export function checkSender(project: Project | null, record: unknown, sender: TxSender): void {
  const gone = !project || project.deletedAt !== null;
  if ("reward" in sender) {
    if (gone) throw projectNotFound();
    const reward = record as RewardRecord | null;
    if (reward?.status !== "held" && reward?.status !== "paying") {
      throw new RewardNotPayableError(sender.reward);
    }
    return;
  }
  if ("keyId" in sender) {
    const key = record as ApiKeyRecord | null;
    if (gone || !key || key.revokedAt !== null) {
      throw new ApiError("unauthorized", "The API key was revoked or its project deleted");
    }
    return;
  }
  const member = record as Member | null;
  if (gone || !member) throw projectNotFound();
  if (!roleAllows(member.role, "withdraw")) throw insufficientRole(member.role, "admin");
}

/**
 * Appends to a reservation's `op` the move its sender's record makes: a reward `held` becomes
 * `paying` to `attempt`'s recipient (the lifecycle's `pay`; its entry is already checked).
 */
export function addSenderMove(
  op: Deno.AtomicOperation,
  sender: TxSender,
  entry: Deno.KvEntryMaybe<unknown>,
  attempt: TxRequestRecord,
): void {
  if (!("reward" in sender)) return;
  const reward = entry.value as RewardRecord;
  const next = applyRewardEvent(
    reward,
    null,
    { type: "pay", recipient: attempt.recipient },
    attempt.updatedAt,
  );
  if (next) op.set(entry.key, next);
}

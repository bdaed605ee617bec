/**
 * Who sends a transaction request, and step 1 checked again on their stored record when the
 * request is checked and when it is reserved: an API key (the routes), or a dashboard member
 * withdrawing (`withdraw.ts`).
 */
import { apiKeyKey, type ApiKeyRecord } from "../../kv/api_keys.ts";
import { type Member, memberKey } from "../../kv/members.ts";
import type { Project } from "../../kv/projects.ts";
import { insufficientRole, roleAllows } from "../auth/roles.ts";
import { ApiError, projectNotFound } from "../../core/api_error.ts";

/** Who sends a request: an API key, or a dashboard member withdrawing. */
export type TxSender = { keyId: string } | { member: string };

/** The store key of a sender's record, which the reservation's commit checks. */
export function senderKey(projectId: string, sender: TxSender): Deno.KvKey {
  return "keyId" in sender
    ? apiKeyKey(projectId, sender.keyId)
    : memberKey(projectId, sender.member);
}

/**
 * Step 1 on the stored records (`record` is the one at `senderKey`): an API key must be active and
 * its project not deleted (401 `unauthorized`: what the guard checked from its cache); a member
 * withdrawing must still be on the active project's team (404 `project_not_found`) with a role
 * that may withdraw (403 `insufficient_role`).
 */
export function checkSender(project: Project | null, record: unknown, sender: TxSender): void {
  const gone = !project || project.deletedAt !== null;
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

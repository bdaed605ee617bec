/**
 * A project's team as the dashboard changes it: invitations by wallet address (accepted or
 * declined by that wallet once signed in), roles, removals, leaving, and handing ownership over.
 * Each change is one commit checked on the team as it stands, with its audit entry
 * (`kv/team.ts`). The caller has checked the actor's role (`access.ts`), and the commit checks it
 * again on the actor's member entry (`memberRule`), except for the invitee's own answer to an
 * invitation, which only the invited wallet's session can give; accepting checks instead that the
 * sender may still grant the role.
 *
 * Removing or demoting a member withdraws in the same commit what they made and may no longer
 * hold (`withdrawals.ts`).
 */
import type { AppContext } from "../context.ts";
import { ApiError, projectNotFound } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import { type AuditAction, type AuditInput } from "../../kv/audit_log.ts";
import { type Invitation } from "../../kv/invitations.ts";
import { type Member, type MemberRole } from "../../kv/members.ts";
import { getProject } from "../../kv/projects.ts";
import {
  acceptInvitation,
  deleteInvitation,
  inviteMember,
  MAX_MEMBERSHIPS,
  MAX_TEAM_SIZE,
  TeamChangeError,
} from "../../kv/team.ts";
import {
  type MemberChange,
  removeMember,
  setMemberRole,
  transferOwnership,
} from "../../kv/member_changes.ts";
import { noteWithdrawn, readKeepRefs, withdrawnWith } from "./withdrawals.ts";
import { MAX_PROJECTS_PER_DEVELOPER } from "../../kv/members.ts";
import { decodeAddress } from "../auth/siws.ts";
import { mayGrant, memberRule } from "../auth/roles.ts";
import type { ProjectAccess } from "./access.ts";
import { type ActionFields, readText, unknownFields } from "./fields.ts";
import { invalidSettings } from "../issue_text.ts";

const INVITED_ROLES: readonly MemberRole[] = ["viewer", "developer", "admin"];

/**
 * A member's address, a role and the refs of what the actor keeps of theirs (`keep`: one ref or a
 * list) from a form or JSON; 400 `invalid_settings` naming each bad field. `role` is allowed but
 * not read where the team page's one form per member sends it to its removal.
 */
export function readMemberFields(
  fields: ActionFields,
  wanted: { address: boolean; role: boolean | "allowed"; keep?: boolean },
): { address: string; role: MemberRole; keep: Set<string> } {
  const names = [
    ...(wanted.address ? ["address"] : []),
    ...(wanted.role ? ["role"] : []),
    ...(wanted.keep ? ["keep"] : []),
  ];
  const problems = unknownFields(fields, (name) => names.includes(name));
  const address = readText(fields.address);
  if (wanted.address && (typeof address !== "string" || !decodeAddress(address))) {
    problems.push("address: must be a Solana wallet address");
  }
  const role = readText(fields.role);
  if (wanted.role === true && !INVITED_ROLES.includes(role as MemberRole)) {
    problems.push(`role: must be ${INVITED_ROLES.join(", ")}`);
  }
  const keep = wanted.keep ? readKeepRefs(fields.keep) : new Set<string>();
  if (!keep) {
    problems.push("keep: must list refs of keys and endpoints, as key:<id> or endpoint:<id>");
  }
  if (problems.length > 0) throw invalidSettings(problems);
  return { address: address as string, role: role as MemberRole, keep: keep! };
}

/** Invites `address` to the project with `role` (an invitation pending for it is replaced). */
export async function inviteToProject(
  ctx: AppContext,
  access: ProjectAccess,
  input: { address: string; role: MemberRole },
): Promise<Invitation> {
  const { address, role } = input;
  const audit = auditOf(ctx, access, "member_invited", { address, role });
  const actor = memberRule("team", role);
  const invitation = await teamChange(() => inviteMember(ctx.kv, { address, role, audit, actor }));
  log("info", "Member invited", { projectId: access.project.id, address, role });
  return invitation;
}

/** Withdraws the invitation pending for `address`. */
export async function revokeProjectInvitation(
  ctx: AppContext,
  access: ProjectAccess,
  address: string,
): Promise<Invitation> {
  return await teamChange(async () => {
    const audit = auditOf(ctx, access, "invitation_revoked", { address });
    return await deleteInvitation(ctx.kv, { address, audit, actor: memberRule("team") });
  });
}

/**
 * The invitee's answer: `accept` makes the signed-in `developer` a member with the invitation's
 * role, otherwise the invitation is declined. 404 `invitation_not_found` without one for them.
 */
export async function answerInvitation(
  ctx: AppContext,
  input: { developer: string; projectId: string; accept: boolean },
): Promise<{ projectId: string; role: MemberRole }> {
  const { developer, projectId, accept } = input;
  if (projectId.length === 0 || projectId.length > 64) throw invitationNotFound();
  const project = await getProject(ctx.kv, projectId);
  if (!project || project.deletedAt !== null) throw invitationNotFound();
  const access = { project, developer, role: "viewer" as const };
  const action = accept ? "invitation_accepted" : "invitation_declined";
  const answered = await teamChange(async () => {
    const audit = auditOf(ctx, access, action, {});
    if (accept) {
      const senderMay = (sender: Member | null, role: MemberRole) =>
        mayGrant(sender?.role ?? null, role);
      return await acceptInvitation(ctx.kv, { audit, senderMay });
    }
    return await deleteInvitation(ctx.kv, { address: developer, audit, actor: null });
  });
  log("info", accept ? "Invitation accepted" : "Invitation declined", {
    projectId,
    developer,
    role: answered.role,
  });
  return { projectId, role: answered.role as MemberRole };
}

/**
 * Gives the member `address` another role (never the owner's), withdrawing what they may no
 * longer hold but the keys and endpoints whose refs are in `keep`.
 */
export async function changeMemberRole(
  ctx: AppContext,
  access: ProjectAccess,
  input: { address: string; role: MemberRole; keep: ReadonlySet<string> },
): Promise<MemberChange> {
  const { address, role, keep } = input;
  const changed = await teamChange(async () => {
    const audit = auditOf(ctx, access, "member_role_changed", { address });
    const actor = memberRule("team", role);
    return await setMemberRole(ctx.kv, {
      address,
      role,
      audit,
      actor,
      withdraws: withdrawnWith(role, keep),
    });
  });
  noteWithdrawn(ctx, access.project.id, changed);
  return changed;
}

/**
 * Removes the member `address`, withdrawing what they made but the keys and endpoints whose refs
 * are in `keep`; when it is the actor themselves, they leave the project and keep nothing.
 */
export async function removeProjectMember(
  ctx: AppContext,
  access: ProjectAccess,
  input: { address: string; keep: ReadonlySet<string> },
): Promise<MemberChange> {
  const { address } = input;
  const leaving = address === access.developer;
  const removed = await teamChange(async () => {
    const audit = leaving
      ? auditOf(ctx, access, "member_left", {})
      : auditOf(ctx, access, "member_removed", { address });
    const actor = memberRule(leaving ? "view" : "team");
    const withdraws = withdrawnWith(null, leaving ? new Set() : input.keep);
    return await removeMember(ctx.kv, { address, audit, actor, withdraws });
  });
  log("info", leaving ? "Member left" : "Member removed", {
    projectId: access.project.id,
    address,
  });
  noteWithdrawn(ctx, access.project.id, removed);
  return removed;
}

/** Hands the project over from its owner (the actor) to the member `to`, who becomes its owner. */
export async function handOverProject(
  ctx: AppContext,
  access: ProjectAccess,
  to: string,
): Promise<void> {
  await teamChange(async () => {
    const audit = auditOf(ctx, access, "ownership_transferred", { from: access.developer, to });
    await transferOwnership(ctx.kv, { to, audit, actor: memberRule("transfer") });
  });
  ctx.apiKeys.forgetProject(access.project.id);
  log("info", "Ownership transferred", { projectId: access.project.id, to });
}

function auditOf(
  ctx: AppContext,
  access: ProjectAccess,
  action: AuditAction,
  details: Record<string, unknown>,
): AuditInput {
  return {
    projectId: access.project.id,
    actor: access.developer,
    action,
    details,
    at: ctx.clock.now(),
  };
}

/** Runs a team change, answering its refusal with the dashboard's error. */
async function teamChange<T>(change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    if (!(error instanceof TeamChangeError)) throw error;
    throw refusal(error);
  }
}

function invitationNotFound(): ApiError {
  return new ApiError("invitation_not_found", "No pending invitation for you to this project");
}

function refusal(error: TeamChangeError): ApiError {
  switch (error.reason) {
    case "closed":
      return projectNotFound();
    case "member":
      return new ApiError("member_exists", "That address is already a member of the project");
    case "full":
      return new ApiError(
        "team_limit_reached",
        `The project already has ${MAX_TEAM_SIZE} members and pending invitations`,
      );
    case "not_invited":
      return invitationNotFound();
    case "sender_gone":
      return new ApiError(
        "invitation_not_found",
        "The invitation is no longer valid: whoever sent it may no longer grant that role",
      );
    case "not_member":
      return new ApiError("member_not_found", "That address is not a member of the project");
    case "owner":
      return new ApiError(
        "owner_unchanged",
        "The owner's role cannot be changed or removed: hand ownership over first",
      );
    case "memberships_full":
      return new ApiError(
        "membership_limit_reached",
        `You are already a member of ${MAX_MEMBERSHIPS} projects: leave one first`,
      );
    case "owned_full":
      return new ApiError(
        "project_limit_reached",
        `The new owner already owns ${MAX_PROJECTS_PER_DEVELOPER} projects`,
      );
  }
}

/**
 * Changes of a project's team (members in `members.ts`, invitations in `invitations.ts`). Every
 * change is one commit checked on the project's team stamp (`["team_stamps", projectId]`), which
 * it moves: so a change is decided on the team as it stands (its size, its one owner), two changes
 * never both pass a limit, and none follows the project's deletion (which closes the stamp). A
 * change writes its id into the stamp, so one whose answer was lost reads it back as applied
 * (`lost_answer.ts`). Each adds its audit entry to the same commit.
 *
 * A change made by a member also checks the actor's own member entry, judged by the caller's
 * `actor` rule (`MemberRule`), so an admin removed or demoted meanwhile changes nothing. Accepting an invitation
 * checks its sender's entry the same way. This file holds the invitations' changes and a deleted
 * project's end; `member_changes.ts` the members' roles, removals and ownership.
 */
import { commitWithRetry, RETRY } from "../core/commit_retry.ts";
import { ulid } from "../core/ids.ts";
import { addAuditEntry, type AuditInput } from "./audit_log.ts";
import {
  type Invitation,
  INVITATION_TTL_MS,
  invitationIndexKey,
  invitationKey,
  listAllInvitations,
  listInvitations,
} from "./invitations.ts";
import { wasWrittenBy } from "./lost_answer.ts";
import {
  getMemberEntry,
  getMemberEntryUnder,
  listMemberProjectIds,
  listMembers,
  type Member,
  memberKey,
  type MemberRole,
  type MemberRule,
  membershipKey,
} from "./members.ts";

/** The project's team stamp. */
interface TeamStamp {
  /** The id of the last change, so a change whose answer was lost can tell it applied. */
  change: string;
  /** True once the project was deleted: no change may follow. */
  closed: boolean;
}

/** The most members plus pending invitations of one project. */
export const MAX_TEAM_SIZE = 25;
/** The most projects one address may be a member of, owned ones included. */
export const MAX_MEMBERSHIPS = 50;

function teamStampKey(projectId: string): Deno.KvKey {
  return ["team_stamps", projectId];
}

/** Why a team change was refused. */
type TeamRefusal =
  | "closed"
  | "member"
  | "full"
  | "not_invited"
  | "sender_gone"
  | "not_member"
  | "owner"
  | "memberships_full"
  | "owned_full";

/** A team change that the team as it stands does not allow. */
export class TeamChangeError extends Error {
  constructor(readonly reason: TeamRefusal) {
    super(`Cannot change the team: ${reason}`);
    this.name = "TeamChangeError";
  }
}

/** The team as one change reads it. */
export interface Team {
  members: Member[];
  invitations: Invitation[];
}

/** The writes of one change, planned on the team as it stands, and what the change answers. */
interface TeamPlan<T> {
  answer: T;
  /** Entries the plan read besides the team, checked by the commit. */
  checks?: Deno.KvEntryMaybe<unknown>[];
  /** What the team showed, added to the audit entry's details (a role before its change). */
  details?: Record<string, unknown>;
  write(op: Deno.AtomicOperation): void;
}

/**
 * Runs one change: reads the stamp and the team, plans the writes (throwing `TeamChangeError` when
 * the team does not allow it) and commits them with the audit entry, checked on the stamp.
 */
export async function changeTeam<T>(
  kv: Deno.Kv,
  input: { label: string; audit: AuditInput; actor: MemberRule | null },
  plan: (team: Team) => TeamPlan<T> | Promise<TeamPlan<T>>,
): Promise<T> {
  const { projectId, at } = input.audit;
  const stampKey = teamStampKey(projectId);
  // Each round one change racing on the stamp commits: 100 rounds outlast a whole team at once.
  return await commitWithRetry(input.label, async () => {
    const stamp = await kv.get<TeamStamp>(stampKey);
    if (stamp.value?.closed) throw new TeamChangeError("closed");
    const rule = input.actor;
    const [members, invitations, actorEntry] = await Promise.all([
      listMembers(kv, projectId),
      listInvitations(kv, projectId, at),
      rule ? getMemberEntryUnder(kv, projectId, { address: input.audit.actor, rule }) : null,
    ]);
    const planned = await plan({ members, invitations });
    const change = ulid(at);
    const actorChecks = actorEntry ? [actorEntry] : [];
    const op = kv.atomic().check(stamp, ...actorChecks, ...(planned.checks ?? []))
      .set(stampKey, { change, closed: false } satisfies TeamStamp);
    planned.write(op);
    const details = { ...input.audit.details, ...planned.details };
    addAuditEntry(op, { ...input.audit, details });
    if ((await op.commit()).ok) return planned.answer;
    if (await wasWrittenBy<TeamStamp>(kv, stampKey, (v) => v.change === change)) {
      return planned.answer;
    }
    return RETRY;
  });
}

/** Invites an address with a role; an invitation already pending for it is replaced. */
export async function inviteMember(
  kv: Deno.Kv,
  input: { address: string; role: MemberRole; audit: AuditInput; actor: MemberRule },
): Promise<Invitation> {
  const { address, role, audit, actor } = input;
  return await changeTeam(kv, { label: "invite a member", audit, actor }, (team) => {
    if (team.members.some((m) => m.address === address)) throw new TeamChangeError("member");
    const replacing = team.invitations.some((i) => i.address === address);
    if (!replacing && team.members.length + team.invitations.length >= MAX_TEAM_SIZE) {
      throw new TeamChangeError("full");
    }
    const invitation: Invitation = {
      projectId: audit.projectId,
      address,
      role,
      invitedBy: audit.actor,
      invitedAt: audit.at,
      expiresAt: audit.at + INVITATION_TTL_MS,
    };
    const kept = { expireIn: INVITATION_TTL_MS };
    return {
      answer: invitation,
      write: (op) => {
        op.set(invitationKey(audit.projectId, address), invitation, kept)
          .set(invitationIndexKey(address, audit.projectId), audit.projectId, kept);
      },
    };
  });
}

/**
 * Makes the invitee (the audit's actor) a member with the invitation's role, while its sender's
 * member entry (checked) passes `senderMay`; else `sender_gone`.
 */
export async function acceptInvitation(
  kv: Deno.Kv,
  input: { audit: AuditInput; senderMay: (sender: Member | null, role: MemberRole) => boolean },
): Promise<Member> {
  const { audit } = input;
  const { projectId, actor: address } = audit;
  const label = "accept an invitation";
  return await changeTeam(kv, { label, audit, actor: null }, async (team) => {
    const invitation = team.invitations.find((i) => i.address === address);
    if (!invitation) throw new TeamChangeError("not_invited");
    const [sender, memberships] = await Promise.all([
      getMemberEntry(kv, projectId, invitation.invitedBy),
      listMemberProjectIds(kv, address),
    ]);
    if (!input.senderMay(sender.value, invitation.role)) throw new TeamChangeError("sender_gone");
    if (memberships.length >= MAX_MEMBERSHIPS) throw new TeamChangeError("memberships_full");
    const member: Member = {
      address,
      role: invitation.role,
      addedAt: audit.at,
      addedBy: invitation.invitedBy,
    };
    return {
      answer: member,
      checks: [sender],
      details: { role: member.role },
      write: (op) => {
        op.set(memberKey(projectId, address), member)
          .set(membershipKey(address, projectId), projectId)
          .delete(invitationKey(projectId, address))
          .delete(invitationIndexKey(address, projectId));
      },
    };
  });
}

/** Deletes the pending invitation of `address` (revoked by the team, or declined by the invitee). */
export async function deleteInvitation(
  kv: Deno.Kv,
  input: { address: string; audit: AuditInput; actor: MemberRule | null },
): Promise<Invitation> {
  const { address, audit, actor } = input;
  return await changeTeam(kv, { label: "delete an invitation", audit, actor }, (team) => {
    const invitation = team.invitations.find((i) => i.address === address);
    if (!invitation) throw new TeamChangeError("not_invited");
    return {
      answer: invitation,
      details: { role: invitation.role },
      write: (op) => {
        op.delete(invitationKey(audit.projectId, address))
          .delete(invitationIndexKey(address, audit.projectId));
      },
    };
  });
}

/**
 * Adds to `op` the end of a deleted project's team: its stamp closed (checked), every member's
 * index entry and every invitation removed. Returns the owner's address, whose owned count the
 * caller lowers in the same commit; null when the team has none.
 */
export async function addTeamClosure(
  kv: Deno.Kv,
  op: Deno.AtomicOperation,
  projectId: string,
): Promise<string | null> {
  const stamp = await kv.get<TeamStamp>(teamStampKey(projectId));
  op.check(stamp).set(
    teamStampKey(projectId),
    { change: ulid(), closed: true } satisfies TeamStamp,
  );
  let owner: string | null = null;
  for (const member of await listMembers(kv, projectId)) {
    if (member.role === "owner") owner = member.address;
    op.delete(membershipKey(member.address, projectId));
  }
  for (const invitation of await listAllInvitations(kv, projectId)) {
    op.delete(invitationKey(projectId, invitation.address))
      .delete(invitationIndexKey(invitation.address, projectId));
  }
  return owner;
}

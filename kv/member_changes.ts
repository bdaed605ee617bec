/**
 * Changes of a team's members, each a team change (`team.ts`): a role, a removal (or leaving), and
 * ownership handed over. Removing or demoting a member withdraws, in the same commit, what they
 * made that the caller's `withdraws` picks (`member_holdings.ts`).
 */
import type { AuditInput } from "./audit_log.ts";
import { type Holding, planWithdrawal } from "./member_holdings.ts";
import {
  MAX_PROJECTS_PER_DEVELOPER,
  type Member,
  memberKey,
  type MemberRole,
  type MemberRule,
  membershipKey,
  ownedCountKey,
} from "./members.ts";
import { changeTeam, type Team, TeamChangeError } from "./team.ts";

/** What a removal or a role change answers: the member as it was and what it withdrew. */
export interface MemberChange {
  member: Member;
  withdrawn: Holding[];
}

/** What a removal or a role change is given: whom, by whom, and which of their holdings go. */
interface MemberChangeInput {
  address: string;
  audit: AuditInput;
  actor: MemberRule;
  /** True for each thing the member made that the change withdraws. */
  withdraws: (holding: Holding) => boolean;
}

/** Gives a member other than the owner another role, withdrawing what `withdraws` picks. */
export async function setMemberRole(
  kv: Deno.Kv,
  input: MemberChangeInput & { role: MemberRole },
): Promise<MemberChange> {
  const { address, role, audit, actor } = input;
  return await changeTeam(kv, { label: "change a member's role", audit, actor }, async (team) => {
    const member = memberOf(team, address);
    const withdrawal = await planWithdrawal(kv, { ...input, invitations: team.invitations });
    return {
      answer: { member, withdrawn: withdrawal.withdrawn },
      details: { before: member.role, after: role },
      write: (op) => {
        op.set(memberKey(audit.projectId, address), { ...member, role });
        withdrawal.write(op);
      },
    };
  });
}

/** Removes a member other than the owner (removed, or leaving), withdrawing what `withdraws` picks. */
export async function removeMember(kv: Deno.Kv, input: MemberChangeInput): Promise<MemberChange> {
  const { address, audit, actor } = input;
  return await changeTeam(kv, { label: "remove a member", audit, actor }, async (team) => {
    const member = memberOf(team, address);
    const withdrawal = await planWithdrawal(kv, { ...input, invitations: team.invitations });
    return {
      answer: { member, withdrawn: withdrawal.withdrawn },
      details: { role: member.role },
      write: (op) => {
        op.delete(memberKey(audit.projectId, address))
          .delete(membershipKey(address, audit.projectId));
        withdrawal.write(op);
      },
    };
  });
}

/**
 * Hands the project over from its owner (the audit's actor) to the member `to`, who must own fewer
 * projects than the limit; the former owner stays on as an admin. Both owned counts move in the
 * commit, checked.
 */
export async function transferOwnership(
  kv: Deno.Kv,
  input: { to: string; audit: AuditInput; actor: MemberRule },
): Promise<void> {
  const { to, audit, actor } = input;
  const from = audit.actor;
  await changeTeam(kv, { label: "transfer ownership", audit, actor }, async (team) => {
    const owner = team.members.find((m) => m.role === "owner");
    if (!owner || owner.address !== from) throw new TeamChangeError("not_member");
    const heir = memberOf(team, to);
    const [fromCount, toCount] = await kv.getMany<[number, number]>([
      ownedCountKey(from),
      ownedCountKey(to),
    ]);
    if ((toCount.value ?? 0) >= MAX_PROJECTS_PER_DEVELOPER) {
      throw new TeamChangeError("owned_full");
    }
    return {
      answer: undefined,
      checks: [fromCount, toCount],
      write: (op) => {
        op.set(memberKey(audit.projectId, from), { ...owner, role: "admin" } satisfies Member)
          .set(memberKey(audit.projectId, to), { ...heir, role: "owner" } satisfies Member)
          .set(ownedCountKey(from), Math.max(0, (fromCount.value ?? 1) - 1))
          .set(ownedCountKey(to), (toCount.value ?? 0) + 1);
      },
    };
  });
}

// A member other than the owner; throws when there is none, or it is the owner.
function memberOf(team: Team, address: string): Member {
  const member = team.members.find((m) => m.address === address);
  if (!member) throw new TeamChangeError("not_member");
  if (member.role === "owner") throw new TeamChangeError("owner");
  return member;
}

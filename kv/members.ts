/**
 * A project's members: each a wallet address with a role, exactly one of them the owner.
 * `project_members` holds each member; `projects_by_developer` indexes every project an address is
 * a member of (the dashboard's list); `project_counts_by_developer` counts the projects it owns
 * (the 5-project limit counts owned projects only). Changes of the team are `team.ts`'s.
 */

import { getManyAtOnce } from "./get_many.ts";

/** Roles, weakest first. */
export const ROLES = ["viewer", "developer", "admin", "owner"] as const;
/** A member's role. */
export type Role = typeof ROLES[number];
/** A role an invitation or a role change may give: ownership is handed over instead. */
export type MemberRole = Exclude<Role, "owner">;

/** A member as stored. */
export interface Member {
  address: string;
  role: Role;
  addedAt: number;
  /** Who invited them (for the owner who created the project: themselves). */
  addedBy: string;
}

/** The most projects one address may own. */
export const MAX_PROJECTS_PER_DEVELOPER = 5;

/** Key of a member. */
export function memberKey(projectId: string, address: string): Deno.KvKey {
  return ["project_members", projectId, address];
}
/** Key of an address's membership index entry (value: project id). */
export function membershipKey(address: string, projectId: string): Deno.KvKey {
  return ["projects_by_developer", address, projectId];
}
/** Key of the number of projects an address owns. */
export function ownedCountKey(address: string): Deno.KvKey {
  return ["project_counts_by_developer", address];
}

/** Adds to `op` the creator of a new project as its owner (the caller checks their owned count). */
export function addFounder(
  op: Deno.AtomicOperation,
  input: { projectId: string; owner: string; now: number },
): void {
  const member: Member = {
    address: input.owner,
    role: "owner",
    addedAt: input.now,
    addedBy: input.owner,
  };
  op.set(memberKey(input.projectId, input.owner), member)
    .set(membershipKey(input.owner, input.projectId), input.projectId);
}

/**
 * Makes the creator of a project without members its owner: a project from before teams, which its
 * creator owned by `createdBy` (their owned count already counts it). One commit checked on their
 * member key, so callers racing add them once; no team change can race it, as a project without
 * members has nobody who may change its team. Returns whether this call added them.
 */
export async function addMissingFounder(
  kv: Deno.Kv,
  project: { id: string; createdBy: string; createdAt: number },
): Promise<boolean> {
  const members = kv.list({ prefix: ["project_members", project.id] }, { limit: 1 });
  for await (const _ of members) return false;
  const op = kv.atomic()
    .check({ key: memberKey(project.id, project.createdBy), versionstamp: null });
  addFounder(op, { projectId: project.id, owner: project.createdBy, now: project.createdAt });
  return (await op.commit()).ok;
}

/** Returns a member entry (versionstamp null when the address is not a member). */
export function getMemberEntry(
  kv: Deno.Kv,
  projectId: string,
  address: string,
): Promise<Deno.KvEntryMaybe<Member>> {
  return kv.get<Member>(memberKey(projectId, address));
}

/**
 * A rule the commit of a change applies to a member's entry as it reads it (null: no member), and
 * checks: it throws to refuse (`memberRule` in `lib/auth/roles.ts`).
 */
export type MemberRule = (member: Member | null) => void;

/** Reads the entry of `address`, which must pass `rule`; the caller's commit checks it. */
export async function getMemberEntryUnder(
  kv: Deno.Kv,
  projectId: string,
  input: { address: string; rule: MemberRule },
): Promise<Deno.KvEntryMaybe<Member>> {
  const entry = await getMemberEntry(kv, projectId, input.address);
  input.rule(entry.value);
  return entry;
}

/** Lists a project's members, by address. */
export async function listMembers(kv: Deno.Kv, projectId: string): Promise<Member[]> {
  const members: Member[] = [];
  for await (const e of kv.list<Member>({ prefix: ["project_members", projectId] })) {
    members.push(e.value);
  }
  return members;
}

/**
 * The address of a project's owner, whose account its work counts against (job lanes, watch
 * events): its owner member, or its creator while it has no members (from before teams).
 */
export async function getProjectOwner(
  kv: Deno.Kv,
  project: { id: string; createdBy: string },
): Promise<string> {
  for await (const e of kv.list<Member>({ prefix: ["project_members", project.id] })) {
    if (e.value.role === "owner") return e.value.address;
  }
  return project.createdBy;
}

/** The address's role in each of `projectIds` (absent where it is no member), by project id. */
export async function getRolesOf(
  kv: Deno.Kv,
  address: string,
  projectIds: readonly string[],
): Promise<Map<string, Role>> {
  const entries = await getManyAtOnce<Member>(kv, projectIds.map((id) => memberKey(id, address)));
  const roles = new Map<string, Role>();
  entries.forEach((entry, i) => {
    if (entry.value) roles.set(projectIds[i]!, entry.value.role);
  });
  return roles;
}

/** Lists the ids of the projects an address is a member of. */
export async function listMemberProjectIds(kv: Deno.Kv, address: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const e of kv.list<string>({ prefix: ["projects_by_developer", address] })) {
    ids.push(e.value);
  }
  return ids;
}

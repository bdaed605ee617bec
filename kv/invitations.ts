/**
 * Pending invitations to a project's team, by wallet address: `project_invitations` holds each,
 * indexed by address in `invitations_by_address` (the invitee's list). Both expire after 7 days
 * (`expireIn`, and `expiresAt` re-checked on read). Creating, accepting and deleting them are
 * changes of the team (`team.ts`).
 */
import { getManyAtOnce } from "./get_many.ts";
import type { MemberRole } from "./members.ts";

/** A pending invitation as stored. */
export interface Invitation {
  projectId: string;
  address: string;
  role: MemberRole;
  invitedBy: string;
  invitedAt: number;
  expiresAt: number;
}

/** How long an invitation waits to be accepted: 7 days. */
export const INVITATION_TTL_MS = 7 * 24 * 3_600_000;

/** Key of an invitation. */
export function invitationKey(projectId: string, address: string): Deno.KvKey {
  return ["project_invitations", projectId, address];
}
/** Key of an invitation's entry in its invitee's list (value: project id). */
export function invitationIndexKey(address: string, projectId: string): Deno.KvKey {
  return ["invitations_by_address", address, projectId];
}

/** Lists a project's invitations, expired ones included (a deletion removes them all). */
export async function listAllInvitations(kv: Deno.Kv, projectId: string): Promise<Invitation[]> {
  const found: Invitation[] = [];
  for await (const e of kv.list<Invitation>({ prefix: ["project_invitations", projectId] })) {
    found.push(e.value);
  }
  return found;
}

/** Lists a project's pending invitations not expired at `now`, by address. */
export async function listInvitations(
  kv: Deno.Kv,
  projectId: string,
  now: number,
): Promise<Invitation[]> {
  return (await listAllInvitations(kv, projectId)).filter((i) => i.expiresAt > now);
}

/** Lists the invitations waiting for an address, not expired at `now`. */
export async function listInvitationsFor(
  kv: Deno.Kv,
  address: string,
  now: number,
): Promise<Invitation[]> {
  const keys: Deno.KvKey[] = [];
  for await (const e of kv.list<string>({ prefix: ["invitations_by_address", address] })) {
    keys.push(invitationKey(e.value, address));
  }
  const found: Invitation[] = [];
  for (const e of await getManyAtOnce<Invitation>(kv, keys)) {
    if (e.value && e.value.expiresAt > now) found.push(e.value);
  }
  return found;
}

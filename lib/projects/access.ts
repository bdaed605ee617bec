/**
 * The one check every dashboard page and action of a project makes: is the signed-in developer a
 * member of this active project, and does their role have the capability the page or action needs
 * (`lib/auth/roles.ts`)? Someone who is not a member gets the same 404 as for a project that does
 * not exist, so ids of other projects leak nothing; a member without the role gets 403
 * `insufficient_role`.
 *
 * A project from before teams that the store migration has not reached yet (written by an instance
 * of the previous version during a deploy) has no members: its creator is made its owner on their
 * first request (`founderRole`), never answered as if it did not exist; nobody else gains anything.
 */
import type { AppContext } from "../context.ts";
import { projectNotFound } from "../../core/api_error.ts";
import { getProject, type Project } from "../../kv/projects.ts";
import { addMissingFounder, getMemberEntry, type Role } from "../../kv/members.ts";
import { CAPABILITIES, type Capability, insufficientRole, roleAllows } from "../auth/roles.ts";

/** A member's access to a project: the project as read, who they are and their role. */
export interface ProjectAccess {
  project: Project;
  developer: string;
  role: Role;
}

/**
 * Returns the developer's access to the active project when their role has `can`; throws 404
 * `project_not_found` (not a member, deleted, unknown) or 403 `insufficient_role`.
 */
export async function authorizeProject(
  ctx: AppContext,
  request: { developer: string; projectId: string; can: Capability },
): Promise<ProjectAccess> {
  const { developer, projectId } = request;
  if (projectId.length === 0 || projectId.length > 64) throw projectNotFound();
  const [project, member] = await Promise.all([
    getProject(ctx.kv, projectId),
    getMemberEntry(ctx.kv, projectId, developer),
  ]);
  if (!project || project.deletedAt !== null) throw projectNotFound();
  const role = member.value?.role ?? await founderRole(ctx, project, developer);
  if (!role) throw projectNotFound();
  if (!roleAllows(role, request.can)) throw insufficientRole(role, CAPABILITIES[request.can]);
  return { project, developer, role };
}

/**
 * The developer's role in a project they are no member of: owner when they created it and it is
 * active without members (made so now, see the header), otherwise none.
 */
export async function founderRole(
  ctx: AppContext,
  project: Project,
  developer: string,
): Promise<Role | null> {
  if (project.createdBy !== developer || project.deletedAt !== null) return null;
  await addMissingFounder(ctx.kv, project);
  // Read again: a request racing this one may have added them.
  return (await getMemberEntry(ctx.kv, project.id, developer)).value?.role ?? null;
}

/**
 * The one check every dashboard page and action of a project makes: is the signed-in developer a
 * member of this active project, and does their role have the capability the page or action needs
 * (`lib/auth/roles.ts`)? Someone who is not a member gets the same 404 as for a project that does
 * not exist, so ids of other projects leak nothing; a member without the role gets 403
 * `insufficient_role`.
 */
import type { AppContext } from "../context.ts";
import { projectNotFound } from "../../core/api_error.ts";
import { getProject, type Project } from "../../kv/projects.ts";
import { getMemberEntry, type Role } from "../../kv/members.ts";
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
  if (!project || project.deletedAt !== null || !member.value) throw projectNotFound();
  const { role } = member.value;
  if (!roleAllows(role, request.can)) throw insufficientRole(role, CAPABILITIES[request.can]);
  return { project, developer, role };
}

/** What the dashboard's first page lists for a developer: their projects with their role, and invitations waiting for them. */
import type { AppContext } from "../context.ts";
import { getRolesOf, type Role } from "../../kv/members.ts";
import { founderRole } from "./access.ts";
import { type Invitation, listInvitationsFor } from "../../kv/invitations.ts";
import { getProject, listProjectsByDeveloper, type Project } from "../../kv/projects.ts";

/** A developer's projects (oldest first) with their role in each, and their pending invitations. */
export async function listDeveloperProjects(
  ctx: AppContext,
  developer: string,
): Promise<{
  projects: Array<{ project: Project; role: Role }>;
  invitations: Array<{ invitation: Invitation; name: string }>;
}> {
  const [projects, waiting] = await Promise.all([
    listProjectsByDeveloper(ctx.kv, developer),
    listInvitationsFor(ctx.kv, developer, ctx.clock.now()),
  ]);
  const roles = await getRolesOf(ctx.kv, developer, projects.map((p) => p.id));
  const invitations = [];
  for (const invitation of waiting) {
    const project = await getProject(ctx.kv, invitation.projectId);
    if (project && project.deletedAt === null) invitations.push({ invitation, name: project.name });
  }
  const listed = [];
  for (const project of projects) {
    const role = roles.get(project.id) ?? await founderRole(ctx, project, developer);
    if (role) listed.push({ project, role });
  }
  return { projects: listed, invitations };
}

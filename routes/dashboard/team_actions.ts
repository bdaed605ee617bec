/**
 * The team's dashboard actions (POST): invitations, roles, removals, leaving and handing the
 * project over, plus the invitee's answer to an invitation. Same-origin check first, as on every
 * dashboard action; forms answered with a redirect and a flash, JSON for scripts.
 */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { dashboardAction } from "../../http/form_action.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { pickText, readFlag } from "../../lib/projects/fields.ts";
import { shortAddress } from "../../components/dashboard/format.ts";
import {
  answerInvitation,
  changeMemberRole,
  handOverProject,
  inviteToProject,
  readMemberFields,
  removeProjectMember,
  revokeProjectInvitation,
} from "../../lib/projects/team.ts";
import { projectAction } from "./_action.ts";

/** `POST /dashboard/projects/:id/{members,invitations,leave,transfer}` and `/dashboard/invitations/:id`. */
export function teamActionRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  const team = (id: string) => projectPath(id, "team");
  return new Hono()
    .post(
      "/dashboard/projects/:id/members",
      origin,
      projectAction(ctx, {
        tab: "team",
        can: "team",
        form: "invite",
        draft: (fields) => pickText(fields, ["address", "role"]),
      }, async ({ developer, fields, project, role }) => {
        const input = readMemberFields(fields, { address: true, role: true });
        const invitation = await inviteToProject(ctx, { project, developer, role }, input);
        return {
          status: 201,
          json: { invitation },
          flash: {
            kind: "success",
            message: `Invited ${shortAddress(input.address)} as ${input.role}: they accept by ` +
              "signing in to the dashboard with that wallet",
            form: "invite",
          },
          redirect: team(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/members/:address/role",
      origin,
      projectAction(ctx, { tab: "team", can: "team", form: "members" }, async (input) => {
        const { c, developer, fields, project, role } = input;
        const { role: newRole } = readMemberFields(fields, { address: false, role: true });
        const address = c.req.param("address")!;
        await changeMemberRole(ctx, { project, developer, role }, { address, role: newRole });
        return {
          json: { ok: true, address, role: newRole },
          flash: { kind: "success", message: `${shortAddress(address)} is now ${newRole}` },
          redirect: team(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/members/:address/remove",
      origin,
      projectAction(ctx, { tab: "team", can: "team", form: "members", readBody: false }, async (
        { c, developer, project, role },
      ) => {
        const address = c.req.param("address")!;
        await removeProjectMember(ctx, { project, developer, role }, address);
        return {
          json: { ok: true },
          flash: { kind: "success", message: `${shortAddress(address)} left the team` },
          redirect: address === developer ? "/dashboard" : team(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/leave",
      origin,
      projectAction(ctx, { tab: "team", can: "view", form: "leave", readBody: false }, async (
        { developer, project, role },
      ) => {
        await removeProjectMember(ctx, { project, developer, role }, developer);
        return {
          json: { ok: true },
          flash: { kind: "success", message: `You left ${project.name}` },
          redirect: "/dashboard",
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/invitations/:address/revoke",
      origin,
      projectAction(ctx, { tab: "team", can: "team", form: "members", readBody: false }, async (
        { c, developer, project, role },
      ) => {
        const address = c.req.param("address")!;
        await revokeProjectInvitation(ctx, { project, developer, role }, address);
        return {
          json: { ok: true },
          flash: { kind: "success", message: `Invitation of ${shortAddress(address)} withdrawn` },
          redirect: team(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/transfer",
      origin,
      projectAction(ctx, {
        tab: "team",
        can: "transfer",
        form: "transfer",
        draft: (fields) => pickText(fields, ["address"]),
      }, async ({ developer, fields, project, role }) => {
        const { address } = readMemberFields(fields, { address: true, role: false });
        await handOverProject(ctx, { project, developer, role }, address);
        return {
          json: { ok: true, owner: address },
          flash: {
            kind: "success",
            message: `${shortAddress(address)} now owns ${project.name}; you stay on as an admin`,
          },
          redirect: team(project.id),
        };
      }),
    )
    .post(
      // The invitee is not a member yet: their session is the proof the invitation asks for.
      "/dashboard/invitations/:id",
      origin,
      dashboardAction(ctx, { back: () => "/dashboard", form: "invitations" }, async (input) => {
        const { c, developer, fields } = input;
        const accept = readFlag(fields.accept) === true;
        const projectId = c.req.param("id")!;
        const answered = await answerInvitation(ctx, { developer, projectId, accept });
        return {
          json: { ok: true, accepted: accept, role: answered.role },
          flash: accept
            ? { kind: "success", message: `You joined the project as ${answered.role}` }
            : { kind: "info", message: "Invitation declined" },
          redirect: accept ? projectPath(projectId) : "/dashboard",
        };
      }),
    );
}

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
import type { Holding } from "../../kv/member_holdings.ts";
import {
  answerInvitation,
  changeMemberRole,
  handOverProject,
  inviteToProject,
  readMemberFields,
  removeProjectMember,
  revokeProjectInvitation,
} from "../../lib/projects/team.ts";
import { holdingRef } from "../../lib/projects/withdrawals.ts";
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
        const read = readMemberFields(fields, { address: false, role: true, keep: true });
        const address = c.req.param("address")!;
        const { withdrawn } = await changeMemberRole(ctx, { project, developer, role }, {
          address,
          role: read.role,
          keep: read.keep,
        });
        return {
          json: { ok: true, address, role: read.role, withdrawn: withdrawn.map(holdingRef) },
          flash: {
            kind: "success",
            message: `${shortAddress(address)} is now ${read.role}${withdrawnText(withdrawn)}`,
          },
          redirect: team(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/members/:address/remove",
      origin,
      projectAction(ctx, { tab: "team", can: "team", form: "members" }, async (
        { c, developer, fields, project, role },
      ) => {
        // The team page's form for a member carries its role too: allowed here, not read.
        const { keep } = readMemberFields(fields, { address: false, role: "allowed", keep: true });
        const address = c.req.param("address")!;
        const access = { project, developer, role };
        const { withdrawn } = await removeProjectMember(ctx, access, { address, keep });
        return {
          json: { ok: true, withdrawn: withdrawn.map(holdingRef) },
          flash: {
            kind: "success",
            message: `${shortAddress(address)} left the team${withdrawnText(withdrawn)}`,
          },
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
        const access = { project, developer, role };
        const { withdrawn } = await removeProjectMember(ctx, access, {
          address: developer,
          keep: new Set(),
        });
        return {
          json: { ok: true, withdrawn: withdrawn.map(holdingRef) },
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

// What a change withdrew, for its flash: ", withdrawing 2 keys, 1 endpoint" or nothing.
function withdrawnText(withdrawn: readonly Holding[]): string {
  const counts = (["key", "endpoint", "invitation"] as const).map((kind) => {
    const n = withdrawn.filter((h) => h.kind === kind).length;
    return n === 0 ? "" : `${n} ${kind}${n === 1 ? "" : "s"}`;
  }).filter((text) => text !== "");
  return counts.length === 0 ? "" : `, withdrawing ${counts.join(", ")} they made`;
}

/** The team page, the audit log page and the audit log's JSON export (GET). */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import { getDeveloperSession } from "../../http/developer_session.ts";
import { listMembers, ROLES } from "../../kv/members.ts";
import { listInvitations } from "../../kv/invitations.ts";
import { holdingsOf, readHoldings } from "../../kv/member_holdings.ts";
import { listAuditEntries, listAuditPage } from "../../kv/audit_log.ts";
import { authorizeProject } from "../../lib/projects/access.ts";
import { parseAuditFilter } from "../../lib/projects/audit_filter.ts";
import { TeamPage } from "../../components/dashboard/team_page.tsx";
import { AuditPage } from "../../components/dashboard/audit_page.tsx";
import { projectPage } from "./_page.tsx";

const AUDIT_PAGE_SIZE = 50;

/** `GET /dashboard/projects/:id/team`, `.../audit` and `.../audit/export`. */
export function teamPageRoutes(ctx: AppContext): Hono {
  return new Hono()
    .get("/dashboard/projects/:id/team", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const [members, invitations] = await Promise.all([
          listMembers(ctx.kv, project.id),
          listInvitations(ctx.kv, project.id, ctx.clock.now()),
        ]);
        // The owner first, then by role, then by address.
        members.sort((a, b) => ROLES.indexOf(b.role) - ROLES.indexOf(a.role));
        const made = await readHoldings(ctx.kv, project.id, invitations);
        const holdings = new Map(members.map((m) => [m.address, holdingsOf(made, m.address)]));
        return {
          title: `Team · ${project.name}`,
          body: (
            <TeamPage
              {...data}
              project={project}
              members={members}
              invitations={invitations}
              holdings={holdings}
            />
          ),
        };
      }))
    .get("/dashboard/projects/:id/audit", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const parsed = parseAuditFilter((name) => c.req.query(name));
        const page = await listAuditPage(ctx.kv, project.id, {
          ...parsed.filter,
          now: ctx.clock.now(),
          limit: AUDIT_PAGE_SIZE,
        });
        return {
          title: `Audit log · ${project.name}`,
          body: (
            <AuditPage
              {...data}
              project={project}
              filter={parsed.text}
              entries={page.entries}
              next={page.next}
              query={parsed.query}
            />
          ),
        };
      }))
    .get("/dashboard/projects/:id/audit/export", async (c) => {
      const developer = await getDeveloperSession(ctx, c);
      if (!developer) throw new ApiError(401, "not_signed_in", "Sign in to the dashboard first");
      const { project } = await authorizeProject(ctx, {
        developer,
        projectId: c.req.param("id"),
        can: "view",
      });
      const { filter } = parseAuditFilter((name) => c.req.query(name));
      const now = ctx.clock.now();
      const entries = listAuditEntries(ctx.kv, project.id, { ...filter, now });
      const encoder = new TextEncoder();
      // Streamed: a year of a busy team's log need not be held in memory at once.
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          const head = { projectId: project.id, name: project.name, exportedAt: now };
          controller.enqueue(encoder.encode(`${JSON.stringify(head).slice(0, -1)},"entries":[`));
          let first = true;
          for await (const entry of entries) {
            controller.enqueue(encoder.encode(`${first ? "" : ","}\n${JSON.stringify(entry)}`));
            first = false;
          }
          controller.enqueue(encoder.encode("\n]}\n"));
          controller.close();
        },
      });
      const day = new Date(now).toISOString().slice(0, 10);
      return new Response(body, {
        headers: {
          "content-type": "application/json; charset=utf-8",
          "content-disposition": `attachment; filename="audit-${project.slug}-${day}.json"`,
          "cache-control": "no-store",
        },
      });
    });
}

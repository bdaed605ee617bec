/** The team page, the audit log page and the audit log's JSON export (GET). */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import { getDeveloperSession } from "../../http/developer_session.ts";
import { listMembers, ROLES } from "../../kv/members.ts";
import { listInvitations } from "../../kv/invitations.ts";
import { holdingsOf, readHoldings } from "../../kv/member_holdings.ts";
import { listAuditPage } from "../../kv/audit_log.ts";
import { authorizeProject } from "../../lib/projects/access.ts";
import { parseAuditFilter } from "../../lib/projects/audit_filter.ts";
import { TeamPage } from "../../components/dashboard/team_page.tsx";
import { AuditPage } from "../../components/dashboard/audit_page.tsx";
import { projectPage } from "./_page.tsx";

const AUDIT_PAGE_SIZE = 50;
// Most entries one page, or one pull of the export, looks at: a filter matching few entries of a
// long log answers within a bounded time and says where to continue.
const AUDIT_MAX_EXAMINED = 1_000;
// Entries the export reads from the store per pull of its body.
const EXPORT_PAGE_SIZE = 100;

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
          maxExamined: AUDIT_MAX_EXAMINED,
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
              searchedPart={page.searchedPart}
              query={parsed.query}
            />
          ),
        };
      }))
    .get("/dashboard/projects/:id/audit/export", async (c) => {
      const developer = await getDeveloperSession(ctx, c);
      if (!developer) throw new ApiError("not_signed_in", "Sign in to the dashboard first");
      const { project } = await authorizeProject(ctx, {
        developer,
        projectId: c.req.param("id"),
        can: "view",
      });
      const { filter } = parseAuditFilter((name) => c.req.query(name));
      const now = ctx.clock.now();
      const encoder = new TextEncoder();
      const head = { projectId: project.id, name: project.name, exportedAt: now };
      let text = `${JSON.stringify(head).slice(0, -1)},"entries":[`;
      let before = filter.before;
      let first = true;
      // Streamed as it is read: the store is read a page at a time, only when the client has taken
      // what was read before (`highWaterMark: 0`), so a year of a busy team's log is never held in
      // memory, whether the client reads it quickly, slowly or not at all.
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          // A page whose entries all fail the filter adds nothing: read on until there is text.
          while (text === "") {
            const page = await listAuditPage(ctx.kv, project.id, {
              ...filter,
              before,
              now,
              limit: EXPORT_PAGE_SIZE,
              maxExamined: AUDIT_MAX_EXAMINED,
            });
            for (const entry of page.entries) {
              text += `${first ? "" : ","}\n${JSON.stringify(entry)}`;
              first = false;
            }
            if (page.next === null) {
              controller.enqueue(encoder.encode(`${text}\n]}\n`));
              controller.close();
              return;
            }
            before = page.next;
          }
          controller.enqueue(encoder.encode(text));
          text = "";
        },
      }, { highWaterMark: 0 });
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

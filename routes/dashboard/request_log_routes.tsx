/** The request log page (`kv/request_log.ts`): the project's `/v1` calls, filtered. */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { listApiKeys } from "../../kv/api_keys.ts";
import { listRequestLog, type RequestLogFilter } from "../../kv/request_log.ts";
import { RequestsPage } from "../../components/dashboard/requests_page.tsx";
import { V1_OPERATIONS } from "../v1/operations.ts";
import { projectPage } from "./_page.tsx";

const REQUESTS_PAGE_SIZE = 100;
// A filtered page looks at no more entries than this (a link goes on from there).
const REQUESTS_SCANNED = 2_000;
const V1_ROUTES = V1_OPERATIONS.filter((op) => op.path.startsWith("/v1/")).map((op) => op.path);

/** `GET /dashboard/projects/:id/requests`, for every member. */
export function requestLogRoutes(ctx: AppContext): Hono {
  return new Hono()
    .get("/dashboard/projects/:id/requests", (c) =>
      projectPage(ctx, c, async (data, project) => {
        const outcome = c.req.query("outcome");
        const filter: RequestLogFilter = {
          ...(outcome === "ok" || outcome === "refused" || outcome === "error" ? { outcome } : {}),
          ...(c.req.query("route") ? { route: c.req.query("route")!.slice(0, 100) } : {}),
          ...(c.req.query("key") ? { keyId: c.req.query("key")!.slice(0, 100) } : {}),
        };
        // This instance's latest calls first; other instances write theirs within a turn.
        await ctx.requestLog.flush();
        const cursor = c.req.query("cursor");
        const [page, keys] = await Promise.all([
          listRequestLog(ctx.kv, project.id, {
            now: ctx.clock.now(),
            filter,
            limit: REQUESTS_PAGE_SIZE,
            scan: REQUESTS_SCANNED,
            ...(cursor ? { cursor: cursor.slice(0, 500) } : {}),
          }),
          listApiKeys(ctx.kv, project.id, ctx.clock.now()),
        ]);
        return {
          title: `Request log · ${project.name}`,
          body: (
            <RequestsPage
              {...data}
              project={project}
              routes={V1_ROUTES}
              keys={keys}
              filter={filter}
              entries={page.entries}
              next={page.cursor}
            />
          ),
        };
      }));
}

import { Hono, type MiddlewareHandler } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { getProject } from "../../kv/projects.ts";
import { projectView } from "../../lib/projects/project_view.ts";
import type { V1Env } from "./guard.ts";

/** `GET /v1/project`: the key's project, read fresh so dashboard changes show at once. */
export function projectRoutes(ctx: AppContext, guard: MiddlewareHandler<V1Env>): Hono<V1Env> {
  return new Hono<V1Env>().get("/project", guard, async (c) => {
    const project = (await getProject(ctx.kv, c.get("project").id)) ?? c.get("project");
    return c.json(projectView(project, ctx.config.baseUrl));
  });
}

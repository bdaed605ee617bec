/** The action wrapper of one project's dashboard forms, as `projectPage` is for its pages. */
import type { Handler } from "hono";
import type { AppContext } from "../../lib/context.ts";
import type { Project } from "../../kv/projects.ts";
import {
  type ActionInput,
  type ActionOptions,
  type ActionResult,
  dashboardAction,
} from "../../http/form_action.ts";
import { projectPath, type ProjectTab } from "../../http/dashboard_paths.ts";
import { getOwnedProject } from "../../lib/projects/ownership.ts";

/**
 * A dashboard action on the project named by the `:id` parameter: a browser returns to `tab` of
 * that project on failure, and `run` gets the project only once it is the developer's own and not
 * deleted (another's or a deleted one is `project_not_found`).
 */
export function projectAction(
  ctx: AppContext,
  options: Omit<ActionOptions, "back"> & { tab: ProjectTab },
  run: (input: ActionInput & { project: Project }) => Promise<ActionResult>,
): Handler {
  const { tab, ...rest } = options;
  return dashboardAction(ctx, {
    ...rest,
    back: (c) => projectPath(c.req.param("id")!, tab),
  }, async (input) => {
    const project = await getOwnedProject(ctx, input.developer, input.c.req.param("id")!);
    return await run({ ...input, project });
  });
}

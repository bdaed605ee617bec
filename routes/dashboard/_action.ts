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
import { authorizeProject } from "../../lib/projects/access.ts";
import type { Capability } from "../../lib/auth/roles.ts";
import type { Role } from "../../kv/members.ts";
import { getLatestAuditId, hasAuditEntryAfter } from "../../kv/audit_log.ts";

/**
 * A dashboard action on the project named by the `:id` parameter: a browser returns to `tab` of
 * that project on failure, and `run` gets the project only once the developer is a member whose
 * role has the capability `can` (`lib/projects/access.ts`: a project that is not theirs or was
 * deleted is `project_not_found`, a role below it `insufficient_role`). Each action that writes an
 * audit entry counts as one of the member's changes to the project (the abuse limit
 * `dashboard_change`, which refuses one past it with 429 `rate_limited` before it runs); a
 * `readOnly` one is not even checked.
 */
export function projectAction(
  ctx: AppContext,
  options: Omit<ActionOptions, "back"> & { tab: ProjectTab; can: Capability; readOnly?: true },
  run: (input: ActionInput & { project: Project; role: Role }) => Promise<ActionResult>,
): Handler {
  const { tab, can, readOnly, ...rest } = options;
  return dashboardAction(ctx, {
    ...rest,
    back: (c) => projectPath(c.req.param("id")!, tab),
  }, async (input) => {
    const projectId = input.c.req.param("id")!;
    const { project, role } = await authorizeProject(ctx, {
      developer: input.developer,
      projectId,
      can,
    });
    if (readOnly) return await run({ ...input, project, role });
    const { developer } = input;
    return await ctx.abuse.afterChange(
      "dashboard_change",
      `${project.id}:${developer}`,
      async () => {
        const after = await getLatestAuditId(ctx.kv, project.id);
        const result = await run({ ...input, project, role });
        // A change is what the audit log recorded: a save that changed nothing is not one.
        const used = await hasAuditEntryAfter(ctx.kv, project.id, { actor: developer, after });
        return { result, used };
      },
    );
  });
}

// Shared steps of dashboard GET pages: the session (or a redirect to sign-in), the project and the
// member's role (or a 404 or 403 page), the flash message, and the response with the page headers.
import type { Context } from "hono";
import type { ComponentChildren } from "preact";
import type { AppContext } from "../../lib/context.ts";
import { getDeveloperSession } from "../../http/developer_session.ts";
import { ApiError } from "../../core/api_error.ts";
import { pageResponse } from "../../components/layout.tsx";
import { takeFlash } from "../../http/flash.ts";
import { DashboardFrame, type FrameData } from "../../components/dashboard/frame.tsx";
import { signInPath } from "../../http/dashboard_paths.ts";
import { authorizeProject } from "../../lib/projects/access.ts";
import type { Capability } from "../../lib/auth/roles.ts";
import type { Project } from "../../kv/projects.ts";

/** A rendered page: its title and body. */
interface RenderedPage {
  title: string;
  body: ComponentChildren;
}

function here(c: Context): string {
  const url = new URL(c.req.url);
  return `${url.pathname}${url.search}`;
}

/** Renders a page for the signed-in developer; without a session, redirects to sign-in and back. */
export async function developerPage(
  ctx: AppContext,
  c: Context,
  render: (data: FrameData) => Promise<RenderedPage> | RenderedPage,
): Promise<Response> {
  const developer = await getDeveloperSession(ctx, c);
  if (!developer) return c.redirect(signInPath(here(c)), 303);
  const flash = await takeFlash(ctx, c, developer);
  const data: FrameData = { serviceName: ctx.config.serviceName, developer, flash };
  return pageResponse(c, await render(data));
}

/**
 * Renders a page of a project the developer is a member of, when their role has `can` (default
 * `view`, which every member has); one that is not theirs or was deleted is a 404 page, a role
 * below `can` a 403 page. The page's `data.role` is the member's role. `render` may answer a
 * response of its own instead (a redirect).
 */
export async function projectPage(
  ctx: AppContext,
  c: Context,
  render: (
    data: FrameData,
    project: Project,
  ) => Promise<RenderedPage | Response> | RenderedPage | Response,
  options: { can?: Capability } = {},
): Promise<Response> {
  const developer = await getDeveloperSession(ctx, c);
  if (!developer) return c.redirect(signInPath(here(c)), 303);
  const flash = await takeFlash(ctx, c, developer);
  const data: FrameData = { serviceName: ctx.config.serviceName, developer, flash };
  let project: Project;
  try {
    const access = await authorizeProject(ctx, {
      developer,
      projectId: c.req.param("id") ?? "",
      can: options.can ?? "view",
    });
    project = access.project;
    data.role = access.role;
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    if (error.code === "insufficient_role") {
      const body = (
        <DashboardFrame data={data}>
          <h1>Not for your role</h1>
          <p data-testid="insufficient-role">{error.message}.</p>
          <p>
            <a href={`/dashboard/projects/${encodeURIComponent(c.req.param("id") ?? "")}`}>
              Back to the project
            </a>
          </p>
        </DashboardFrame>
      );
      return pageResponse(c, { title: "Not for your role", body }, 403);
    }
    if (error.code !== "project_not_found") throw error;
    const body = (
      <DashboardFrame data={data}>
        <h1>Project not found</h1>
        <p>
          No project of yours has this address: it was deleted, or you are not on its team.
        </p>
        <p>
          <a href="/dashboard">Back to your projects</a>
        </p>
      </DashboardFrame>
    );
    return pageResponse(c, { title: "Project not found", body }, 404);
  }
  const rendered = await render(data, project);
  return rendered instanceof Response ? rendered : pageResponse(c, rendered);
}

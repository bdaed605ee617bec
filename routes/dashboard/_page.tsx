// Shared steps of dashboard GET pages: the session (or a redirect to sign-in), the owned project
// (or a 404 page), the flash message, and the response with the page headers.
import type { Context } from "hono";
import type { ComponentChildren } from "preact";
import type { AppContext } from "../../lib/context.ts";
import { getDeveloperSession } from "../../http/developer_session.ts";
import { ApiError } from "../../core/api_error.ts";
import { pageResponse } from "../../components/layout.tsx";
import { takeFlash } from "../../http/flash.ts";
import { DashboardFrame, type FrameData } from "../../components/dashboard/frame.tsx";
import { signInPath } from "../../http/dashboard_paths.ts";
import { getOwnedProject } from "../../lib/projects/ownership.ts";
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

/** Renders a page of one of the developer's projects; another's or a deleted one is a 404 page. */
export async function projectPage(
  ctx: AppContext,
  c: Context,
  render: (data: FrameData, project: Project) => Promise<RenderedPage> | RenderedPage,
): Promise<Response> {
  const developer = await getDeveloperSession(ctx, c);
  if (!developer) return c.redirect(signInPath(here(c)), 303);
  const flash = await takeFlash(ctx, c, developer);
  const data: FrameData = { serviceName: ctx.config.serviceName, developer, flash };
  let project: Project;
  try {
    project = await getOwnedProject(ctx, developer, c.req.param("id") ?? "");
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== "project_not_found") throw error;
    const body = (
      <DashboardFrame data={data}>
        <h1>Project not found</h1>
        <p>
          No project of yours has this address: it was deleted, or it belongs to another account.
        </p>
        <p>
          <a href="/dashboard">Back to your projects</a>
        </p>
      </DashboardFrame>
    );
    return pageResponse(c, { title: "Project not found", body }, 404);
  }
  return pageResponse(c, await render(data, project));
}

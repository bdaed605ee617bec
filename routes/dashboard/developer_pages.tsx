/** The dashboard's pages outside any project: signing in and the developer's project list. */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { getDeveloperSession } from "../../http/developer_session.ts";
import { dashboardNextPath, parseNextPath, withErrorCode } from "../../lib/auth/next_path.ts";
import { clearCookie, LINK_RETURN_COOKIE, readSignedCookie } from "../../http/cookies.ts";
import { pageResponse } from "../../components/layout.tsx";
import { ProjectsPage } from "../../components/dashboard/projects_page.tsx";
import { dashboardErrorMessage, SignInPage } from "../../components/dashboard/sign_in_page.tsx";
import { isLocalOrigin } from "../../lib/config.ts";
import { listDeveloperProjects } from "../../lib/projects/listing.ts";
import { developerPage } from "./_page.tsx";

/** `GET /dashboard/sign-in`, `/dashboard` and `/dashboard/projects`. */
export function developerPageRoutes(ctx: AppContext): Hono {
  const { baseUrl } = ctx.config;
  return new Hono()
    .get("/dashboard/sign-in", async (c) => {
      const next = dashboardNextPath(c.req.query("next"));
      if (await getDeveloperSession(ctx, c)) return c.redirect(next, 303);
      const error = new URL(next, baseUrl).searchParams.get("error");
      const body = (
        <SignInPage
          serviceName={ctx.config.serviceName}
          next={next}
          sandbox={isLocalOrigin(baseUrl)}
          error={error}
        />
      );
      return pageResponse(c, { title: `Sign in · ${ctx.config.serviceName}`, body });
    })
    .get("/dashboard", async (c) => {
      const error = c.req.query("error");
      // A player whose Roblox sign-in outlived its flow lands here (the spec's redirect): back to
      // the linking page it started from, never the developers' sign-in.
      const started = error === "oauth_state_mismatch"
        ? parseNextPath(
          (await readSignedCookie<{ path: string }>(ctx, c, LINK_RETURN_COOKIE))?.path,
        )
        : null;
      if (started?.kind === "link") {
        clearCookie(c, LINK_RETURN_COOKIE);
        return c.redirect(withErrorCode(started.path, "oauth_state_mismatch"), 303);
      }
      return await developerPage(ctx, c, async (data) => {
        return {
          title: `Projects · ${ctx.config.serviceName}`,
          body: (
            <ProjectsPage
              {...data}
              baseUrl={baseUrl}
              {...await listDeveloperProjects(ctx, data.developer)}
              errorMessage={dashboardErrorMessage(error)}
            />
          ),
        };
      });
    })
    .get("/dashboard/projects", (c) => c.redirect("/dashboard", 303));
}

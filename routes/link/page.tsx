import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { hasOauthApp } from "../../lib/auth/oauth_app.ts";
import { getPlayerSession } from "../../http/player_session.ts";
import { LinkPage, NoGamePage } from "../../components/link_page.tsx";
import { pageResponse } from "../../components/layout.tsx";
import { linkUrl } from "../../lib/link/page_url.ts";
import { getLinkByUser } from "../../kv/links.ts";
import { getActiveProjectBySlug } from "../../kv/projects.ts";
import { readLinkRewards } from "./_rewards.ts";

/** `GET /link/:slug`: the hosted linking page (HTML). */
export function linkPageRoutes(ctx: AppContext): Hono {
  return new Hono().get("/link/:slug", async (c) => {
    const slug = c.req.param("slug");
    const project = slug.length <= 100 ? await getActiveProjectBySlug(ctx.kv, slug) : null;
    if (!project) {
      return pageResponse(c, { title: "No game uses this link", body: <NoGamePage /> }, 404);
    }
    const player = await getPlayerSession(ctx, c, project.id);
    const [link, rewards] = player
      ? await Promise.all([
        getLinkByUser(ctx.kv, project.id, player.id),
        readLinkRewards(ctx, project, player.id),
      ])
      : [null, []];
    const body = (
      <LinkPage
        serviceName={ctx.config.serviceName}
        project={project}
        pageUrl={linkUrl(ctx.config.baseUrl, project.slug)}
        signInConfigured={hasOauthApp(project)}
        player={player}
        link={link}
        rewards={rewards}
        error={c.req.query("error") ?? null}
      />
    );
    return pageResponse(c, { title: `Link a wallet to ${project.name}`, body });
  });
}

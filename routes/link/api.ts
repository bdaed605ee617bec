import { clientAddress } from "../../http/client_address.ts";
import { type Context, Hono } from "hono";
import { z } from "zod";
import type { AppContext } from "../../lib/context.ts";
import { getPlayerSession } from "../../http/player_session.ts";
import { type Player } from "../../kv/sessions.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { issueLinkChallenge, verifyLinkChallenge } from "../../lib/link/challenge.ts";
import { linkPlayerWallet, unlinkPlayerWallet } from "../../lib/link/linking.ts";
import { ApiError, projectNotFound } from "../../core/api_error.ts";
import { readJsonBody } from "../../http/validate.ts";
import { acceptsHtml } from "../../components/layout.tsx";
import { getLinkByUser } from "../../kv/links.ts";
import { getActiveProjectBySlug, type Project } from "../../kv/projects.ts";
import { readLinkRewards } from "./_rewards.ts";

const challengeBody = z.object({ address: z.string() });
const verifyBody = z.object({ nonce: z.string(), signature: z.string() });

/** The linking page's JSON routes under `/api/link/:slug`: same origin, then project, then session. */
export function linkApiRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });

  async function projectOf(c: Context): Promise<Project> {
    const slug = c.req.param("slug") ?? "";
    const project = slug.length <= 100 ? await getActiveProjectBySlug(ctx.kv, slug) : null;
    if (!project) throw projectNotFound("No active project has this slug");
    return project;
  }

  async function playerOf(c: Context, project: Project): Promise<Player> {
    const player = await getPlayerSession(ctx, c, project.id);
    if (!player) throw new ApiError("not_signed_in", "Sign in with Roblox on this page first");
    return player;
  }

  return new Hono()
    .get("/api/link/:slug/me", async (c) => {
      const project = await projectOf(c);
      const user = await getPlayerSession(ctx, c, project.id);
      const link = user ? await getLinkByUser(ctx.kv, project.id, user.id) : null;
      c.header("cache-control", "no-store");
      return c.json({ user, link: link && { address: link.address, linkedAt: link.linkedAt } });
    })
    // The signed-in player's rewards, which the page reads again after a link until each is sent.
    .get("/api/link/:slug/rewards", async (c) => {
      const project = await projectOf(c);
      const player = await playerOf(c, project);
      c.header("cache-control", "no-store");
      return c.json({ rewards: await readLinkRewards(ctx, project, player.id) });
    })
    .post("/api/link/:slug/challenge", origin, async (c) => {
      const project = await projectOf(c);
      const player = await playerOf(c, project);
      const { address } = await readJsonBody(c, challengeBody);
      const client = clientAddress(ctx, c);
      return c.json(await issueLinkChallenge(ctx, { project, player, address, client }));
    })
    .post("/api/link/:slug/verify", origin, async (c) => {
      const project = await projectOf(c);
      const player = await playerOf(c, project);
      const { nonce, signature } = await readJsonBody(c, verifyBody);
      const address = await verifyLinkChallenge(ctx, { project, player, nonce, signature });
      const link = await linkPlayerWallet(ctx, project.id, { userId: player.id, address });
      return c.json({ link: { address: link.address, linkedAt: link.linkedAt } });
    })
    .post("/api/link/:slug/unlink", origin, async (c) => {
      const project = await projectOf(c);
      const player = await playerOf(c, project);
      await unlinkPlayerWallet(ctx, project.id, player.id);
      // The page's Unlink button is a plain form too, so it works without JavaScript.
      if (acceptsHtml(c)) return c.redirect(`/link/${project.slug}`, 303);
      return c.json({ ok: true });
    });
}

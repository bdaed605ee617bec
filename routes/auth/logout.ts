import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { clearDeveloperSession } from "../../lib/auth/developer_session.ts";
import { clearPlayerSession } from "../../lib/auth/player_session.ts";
import { sameOrigin } from "../../lib/auth/same_origin.ts";
import { acceptsHtml } from "../../lib/pages/layout.tsx";

/** `POST /auth/logout`: same origin only, no session needed; ends both sessions. */
export function logoutRoutes(ctx: AppContext): Hono {
  return new Hono().post("/auth/logout", sameOrigin({ baseUrl: ctx.config.baseUrl }), (c) => {
    clearPlayerSession(c);
    clearDeveloperSession(c);
    if (acceptsHtml(c)) return c.redirect("/", 303);
    return c.json({ ok: true });
  });
}

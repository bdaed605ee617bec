import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import {
  clearDeveloperSession,
  endAllDeveloperSessions,
  getDeveloperSession,
} from "../../http/developer_session.ts";
import { clearPlayerSession } from "../../http/player_session.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { wantsJson } from "../../http/form_action.ts";
import { signInPath } from "../../http/dashboard_paths.ts";
import { ApiError } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import { acceptsHtml } from "../../components/layout.tsx";

/**
 * `POST /auth/logout`: same origin only, no session needed; ends both sessions in the store.
 * `POST /dashboard/sign-out-everywhere`: same origin and a developer session; ends every session
 * of that developer, on every browser (for a cookie that may have been copied).
 */
export function logoutRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  return new Hono()
    .post("/auth/logout", origin, async (c) => {
      await clearPlayerSession(ctx, c);
      await clearDeveloperSession(ctx, c);
      if (acceptsHtml(c)) return c.redirect("/", 303);
      return c.json({ ok: true });
    })
    .post("/dashboard/sign-out-everywhere", origin, async (c) => {
      const developer = await getDeveloperSession(ctx, c);
      if (!developer) {
        if (wantsJson(c)) {
          throw new ApiError("not_signed_in", "Sign in to the dashboard first");
        }
        return c.redirect(signInPath("/dashboard"), 303);
      }
      const ended = await endAllDeveloperSessions(ctx, c, developer);
      log("info", "Developer signed out everywhere", { developer, ended });
      if (wantsJson(c)) return c.json({ ok: true, ended });
      return c.redirect("/", 303);
    });
}

/**
 * Connecting a project's game with Roblox from its settings page, and what the connection does:
 * `GET .../roblox/connect` sends the member to Roblox's consent page (state and PKCE verifier in
 * a signed cookie; a link, since the pages' `form-action 'self'` stops a form's redirect to
 * another origin; it changes nothing until the callback), `GET /dashboard/roblox/callback`
 * finishes it, and the actions choose the
 * experience, install and rotate the game's API key, and disconnect. Every one needs the
 * `connect` capability (an admin or the owner: `lib/auth/roles.ts`); the flows are in
 * `lib/roblox/connection.ts` and `lib/projects/game_key.ts`.
 */
import { Hono } from "hono";
import { z } from "zod";
import type { AppContext } from "../../lib/context.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import {
  clearCookie,
  readSignedCookie,
  ROBLOX_CONNECT_COOKIE,
  setSignedCookie,
} from "../../http/cookies.ts";
import { getDeveloperSession } from "../../http/developer_session.ts";
import { setFlash } from "../../http/flash.ts";
import { projectPath, signInPath } from "../../http/dashboard_paths.ts";
import { ApiError } from "../../core/api_error.ts";
import { timingSafeEqual } from "../../core/hash.ts";
import { authorizeProject } from "../../lib/projects/access.ts";
import {
  chooseUniverse,
  disconnect,
  finishConnection,
  startConnection,
} from "../../lib/roblox/connection.ts";
import { CONNECT_CALLBACK_PATH } from "../../lib/roblox/connect_app.ts";
import {
  BLEED_OFF_MINUTES,
  DEFAULT_GAME_SECRET_ID,
  installGameKey,
  rotateGameKey,
} from "../../lib/projects/game_key.ts";
import { readKeyScopes } from "../../lib/projects/keys.ts";
import { readText } from "../../lib/projects/fields.ts";
import { forgetEventSettings } from "../../lib/events/settings.ts";
import { projectAction } from "./_action.ts";
import { projectPage } from "./_page.tsx";

const flowSchema = z.object({
  state: z.string().min(1),
  verifier: z.string().min(43),
  projectId: z.string().min(1),
  developer: z.string().min(1),
});

/** Where the settings page shows the connection. */
function back(projectId: string): string {
  return `${projectPath(projectId, "settings")}#roblox`;
}

/** `POST /dashboard/projects/:id/roblox/...` and the OAuth callback. */
export function robloxRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  const action = (run: Parameters<typeof projectAction>[2], readBody = true) =>
    projectAction(ctx, { tab: "settings", can: "connect", form: "roblox", readBody }, run);

  return new Hono()
    .get(
      "/dashboard/projects/:id/roblox/connect",
      (c) =>
        projectPage(ctx, c, async (data, project) => {
          try {
            const start = await startConnection(ctx, project);
            await setSignedCookie(ctx, c, ROBLOX_CONNECT_COOKIE, {
              state: start.state,
              verifier: start.verifier,
              projectId: project.id,
              developer: data.developer,
            });
            c.header("cache-control", "no-store");
            return c.redirect(start.authorizeUrl, 303);
          } catch (e) {
            if (!(e instanceof ApiError)) throw e;
            await setFlash(ctx, c, data.developer, {
              kind: "error",
              message: e.message,
              form: "roblox",
            });
            return c.redirect(back(project.id), 303);
          }
        }, { can: "connect" }),
    )
    .get(CONNECT_CALLBACK_PATH, async (c) => {
      const developer = await getDeveloperSession(ctx, c);
      if (!developer) return c.redirect(signInPath("/dashboard"), 303);
      const parsed = flowSchema.safeParse(await readSignedCookie(ctx, c, ROBLOX_CONNECT_COOKIE));
      const { code, state, error } = c.req.query();
      // The state first: a callback that does not carry ours was not sent for this member's flow.
      if (!parsed.success || !state || !timingSafeEqual(state, parsed.data.state)) {
        await setFlash(ctx, c, developer, {
          kind: "error",
          message: "The connection could not be finished: start it again from the settings page",
        });
        return c.redirect("/dashboard", 303);
      }
      const flow = parsed.data;
      clearCookie(c, ROBLOX_CONNECT_COOKIE);
      const fail = async (message: string) => {
        await setFlash(ctx, c, developer, { kind: "error", message, form: "roblox" });
        return c.redirect(back(flow.projectId), 303);
      };
      if (flow.developer !== developer) return await fail("Signed in as someone else meanwhile");
      if (error || !code) return await fail("Roblox did not grant access: nothing was connected");
      try {
        const { project } = await authorizeProject(ctx, {
          developer,
          projectId: flow.projectId,
          can: "connect",
        });
        const connection = await finishConnection(ctx, {
          project,
          developer,
          code,
          verifier: flow.verifier,
        });
        forgetEventSettings(ctx, project.id);
        await setFlash(ctx, c, developer, {
          kind: "success",
          message: connection.universeId
            ? `Game connected: universe ${connection.universeId}`
            : "Game connected: choose which of the experiences it is",
          form: "roblox",
        });
        return c.redirect(back(project.id), 303);
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        return await fail(e.message);
      }
    })
    .post(
      "/dashboard/projects/:id/roblox/universe",
      origin,
      action(async ({ developer, fields, project }) => {
        const universeId = readText(fields.universeId);
        const connection = await chooseUniverse(ctx, {
          project,
          developer,
          universeId: typeof universeId === "string" ? universeId : "",
        });
        forgetEventSettings(ctx, project.id);
        return {
          json: { universeId: connection.universeId },
          flash: {
            kind: "success",
            message: `Using universe ${connection.universeId}`,
            form: "roblox",
          },
          redirect: back(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/roblox/disconnect",
      origin,
      action(async ({ developer, project }) => {
        await disconnect(ctx, { project, developer });
        forgetEventSettings(ctx, project.id);
        return {
          json: { ok: true },
          flash: { kind: "success", message: "Game disconnected from Roblox", form: "roblox" },
          redirect: back(project.id),
        };
      }, false),
    )
    .post(
      "/dashboard/projects/:id/roblox/install-key",
      origin,
      action(async ({ developer, fields, project }) => {
        const { secretId: rawId, ...rest } = fields;
        const secretId = readText(rawId);
        const installed = await installGameKey(ctx, {
          project,
          developer,
          scopes: readKeyScopes(rest),
          secretId: typeof secretId === "string" && secretId ? secretId : DEFAULT_GAME_SECRET_ID,
        });
        return {
          status: 201,
          json: { keyId: installed.keyId, secretId: installed.secretId },
          flash: {
            kind: "success",
            message:
              `API key ${installed.preview}… installed in the game as the secret ${installed.secretId}`,
            form: "roblox",
          },
          redirect: back(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/roblox/rotate",
      origin,
      action(async ({ developer, fields, project }) => {
        const minutes = readText(fields.bleedOffMinutes);
        const key = await rotateGameKey(ctx, {
          project,
          developer,
          bleedOffMinutes: typeof minutes === "string" && minutes
            ? Number(minutes)
            : BLEED_OFF_MINUTES.default,
        });
        return {
          json: { keyId: key.keyId, replacing: key.replacing },
          flash: {
            kind: "success",
            message: "New key installed and servers restarting: the old key is revoked once " +
              "players have moved to new servers",
            form: "roblox",
          },
          redirect: back(project.id),
        };
      }),
    );
}

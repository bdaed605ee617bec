/**
 * The playground's aids (POST), offered on a loopback origin only (`lib/projects/sandbox_funds.ts`
 * refuses them anywhere else): sandbox SOL for the managed wallet, and the Roblox stand-ins'
 * credentials saved in the settings.
 */
import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { projectPath } from "../../http/dashboard_paths.ts";
import { fundFromSandbox } from "../../lib/projects/sandbox_funds.ts";
import { useStandInCredentials } from "../../lib/projects/sandbox_roblox.ts";
import { projectAction } from "./_action.ts";

/** `POST /dashboard/projects/:id/wallet/sandbox-sol` and `.../settings/stand-in`. */
export function sandboxActionRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  return new Hono()
    .post(
      "/dashboard/projects/:id/wallet/sandbox-sol",
      origin,
      projectAction(ctx, {
        tab: "",
        can: "wallet",
        form: "wallet",
        readBody: false,
      }, async ({ developer, project }) => {
        const funded = await fundFromSandbox(ctx, { project, developer });
        return {
          json: funded,
          flash: {
            kind: "success",
            message: `${funded.sol} sandbox SOL added to the managed wallet`,
          },
          redirect: projectPath(project.id),
        };
      }),
    )
    .post(
      "/dashboard/projects/:id/settings/stand-in",
      origin,
      projectAction(ctx, {
        tab: "settings",
        can: "settings",
        form: "oauth",
        readBody: false,
      }, async ({ developer, project }) => {
        const saved = await useStandInCredentials(ctx, { project, developer });
        return {
          json: saved,
          flash: {
            kind: "success",
            message: "Stand-in credentials saved: players can link and events are on",
            form: "oauth",
          },
          redirect: projectPath(project.id, "settings"),
        };
      }),
    );
}

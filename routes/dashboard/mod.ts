import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { dashboardActionRoutes } from "./actions.ts";
import { dashboardPageRoutes } from "./pages.tsx";
import { developerPageRoutes } from "./developer_pages.tsx";
import { teamActionRoutes } from "./team_actions.ts";
import { teamPageRoutes } from "./team_pages.tsx";
import { withdrawRoutes } from "./withdraw_routes.tsx";
import { keyExportRoutes } from "./key_export_routes.tsx";
import { webhookRoutes } from "./webhook_routes.tsx";
import { requestLogRoutes } from "./request_log_routes.tsx";
import { rewardRoutes } from "./reward_routes.tsx";
import { robloxRoutes } from "./roblox_routes.ts";
import { sandboxActionRoutes } from "./sandbox_actions.ts";

/** The developer dashboard under `/dashboard`: server-rendered pages and their form actions. */
export function dashboardRoutes(ctx: AppContext): Hono {
  return new Hono()
    .route("/", developerPageRoutes(ctx))
    .route("/", dashboardPageRoutes(ctx))
    .route("/", teamPageRoutes(ctx))
    .route("/", requestLogRoutes(ctx))
    .route("/", rewardRoutes(ctx))
    .route("/", dashboardActionRoutes(ctx))
    .route("/", sandboxActionRoutes(ctx))
    .route("/", teamActionRoutes(ctx))
    .route("/", withdrawRoutes(ctx))
    .route("/", keyExportRoutes(ctx))
    .route("/", webhookRoutes(ctx))
    .route("/", robloxRoutes(ctx));
}

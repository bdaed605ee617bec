import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { dashboardActionRoutes } from "./actions.ts";
import { dashboardPageRoutes } from "./pages.tsx";
import { webhookRoutes } from "./webhook_routes.tsx";

/** The developer dashboard under `/dashboard`: server-rendered pages and their form actions. */
export function dashboardRoutes(ctx: AppContext): Hono {
  return new Hono()
    .route("/", dashboardPageRoutes(ctx))
    .route("/", dashboardActionRoutes(ctx))
    .route("/", webhookRoutes(ctx));
}

import { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import type { AppContext } from "../lib/context.ts";
import { ApiError, errorBody } from "../core/api_error.ts";
import { log } from "../core/log.ts";
import { bodyLimits } from "../http/body_limit.ts";
import { securityHeaders } from "../http/security_headers.ts";
import { healthRoutes } from "./health.ts";
import { v1Routes } from "./v1/mod.ts";
import { authRoutes } from "./auth/mod.ts";
import { linkRoutes } from "./link/mod.ts";
import { staticRoutes } from "./static.ts";
import { dashboardRoutes } from "./dashboard/mod.ts";
import { homeRoutes } from "./home.tsx";
import { docsRoutes } from "./docs.ts";

/** Composes every route of the service into one app with the one error path. */
export function createApp(ctx: AppContext): Hono {
  const app = new Hono();
  // App-wide, so every route added later is bounded and gets the headers without asking.
  app.use(securityHeaders({ baseUrl: ctx.config.baseUrl }));
  app.use(bodyLimits());
  app.route("/", healthRoutes(ctx));
  app.route("/v1", v1Routes(ctx));
  app.route("/", linkRoutes(ctx));
  app.route("/", authRoutes(ctx));
  app.route("/", staticRoutes());
  app.route("/", docsRoutes(ctx));
  app.route("/", dashboardRoutes(ctx));
  app.route("/", homeRoutes(ctx));
  app.notFound((c) => c.json(errorBody("not_found", "No such route"), 404));
  app.onError((err, c) => {
    if (err instanceof ApiError) return c.json(errorBody(err.code, err.message), err.status);
    if (err instanceof HTTPException && err.status < 500) {
      return c.json(errorBody("invalid_request", err.message || "Bad request"), err.status);
    }
    log("error", "Unhandled error", { method: c.req.method, path: c.req.path, error: err });
    return c.json(errorBody("internal", "Internal error"), 500);
  });
  return app;
}

import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { linkApiRoutes } from "./api.ts";
import { linkPageRoutes } from "./page.tsx";

/** The hosted linking flow: the page at `/link/:slug` and its API at `/api/link/:slug/*`. */
export function linkRoutes(ctx: AppContext): Hono {
  return new Hono().route("/", linkPageRoutes(ctx)).route("/", linkApiRoutes(ctx));
}

import { Hono } from "hono";
import type { AppContext } from "../lib/context.ts";

/** `GET /health`: no key, counted toward nothing. */
export function healthRoutes(ctx: AppContext): Hono {
  // The provider in force, not just the setting: it is what signs (or refuses to).
  return new Hono().get("/health", (c) => c.json({ ok: true, wallets: ctx.wallets.name }));
}

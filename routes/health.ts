import { Hono } from "hono";
import type { AppContext } from "../lib/context.ts";

/** `GET /health`: no key, counted toward nothing. */
export function healthRoutes(ctx: AppContext): Hono {
  return new Hono().get("/health", (c) => c.json({ ok: true, wallets: ctx.config.walletProvider }));
}

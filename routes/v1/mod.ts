import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { eventRoutes } from "./events.ts";
import { apiGuard, type V1Env } from "./guard.ts";
import { playerRoutes } from "./players.ts";
import { projectRoutes } from "./project.ts";
import { signatureRoutes } from "./signatures.ts";
import { txRoutes } from "./tx.ts";
import { txListRoutes } from "./tx_list.ts";
import { walletRoutes } from "./wallets.ts";

/** The game API under `/v1`. The guard sits on each route, so unknown paths stay plain 404s. */
export function v1Routes(ctx: AppContext): Hono<V1Env> {
  const guard = apiGuard(ctx);
  return new Hono<V1Env>()
    .route("/", projectRoutes(ctx, guard))
    .route("/", playerRoutes(ctx, guard))
    .route("/", walletRoutes(ctx, guard))
    .route("/", signatureRoutes(ctx, guard))
    .route("/", txRoutes(ctx, guard))
    .route("/", txListRoutes(ctx, guard))
    .route("/", eventRoutes(ctx, apiGuard(ctx, { limit: "feed_reads" })));
}

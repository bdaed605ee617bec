import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { eventRoutes } from "./events.ts";
import { apiGuard, type V1Env } from "./guard.ts";
import { playerRoutes } from "./players.ts";
import { requestLogging } from "./request_logging.ts";
import { projectRoutes } from "./project.ts";
import { rewardRoutes } from "./rewards.ts";
import { signatureRoutes } from "./signatures.ts";
import { txRoutes } from "./tx.ts";
import { txListRoutes } from "./tx_list.ts";
import { walletRoutes } from "./wallets.ts";

/**
 * The game API under `/v1`. The guard sits on each route, so unknown paths stay plain 404s; the
 * transaction routes need a key with the `pay` scope (and go on while their request is counted),
 * every other route one with `read`.
 */
export function v1Routes(ctx: AppContext): Hono<V1Env> {
  const read = apiGuard(ctx, { scope: "read" });
  const pay = apiGuard(ctx, { scope: "pay", quotaVerdict: "awaited_by_route" });
  return new Hono<V1Env>()
    .use("*", requestLogging(ctx))
    .route("/", projectRoutes(ctx, read))
    .route("/", playerRoutes(ctx, read))
    .route("/", walletRoutes(ctx, read))
    .route("/", signatureRoutes(ctx, read))
    .route("/", txRoutes(ctx, { read, pay }))
    .route("/", txListRoutes(ctx, read))
    .route("/", rewardRoutes(ctx, { read, pay: apiGuard(ctx, { scope: "pay" }) }))
    .route("/", eventRoutes(ctx, apiGuard(ctx, { scope: "read", limit: "feed_reads" })));
}

import { Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import { readJsonBody } from "../../http/validate.ts";
import { getLinkByUser, getLinksByUsers } from "../../kv/links.ts";
import type { V1Env } from "./guard.ts";
import { parseUserId, userIdSchema } from "../../lib/user_id.ts";

/** Body of `POST /v1/players/wallets`. */
export const bulkSchema = z.object({
  userIds: z.array(userIdSchema).max(200).meta({ description: "Up to 200 Roblox user ids" }),
}).strict();

/** Player wallet lookups, read from the service's own store. */
export function playerRoutes(ctx: AppContext, guard: MiddlewareHandler<V1Env>): Hono<V1Env> {
  return new Hono<V1Env>()
    .get("/players/:userId/wallet", guard, async (c) => {
      const userId = parseUserId(c.req.param("userId"));
      if (userId === null) {
        throw new ApiError("invalid_user_id", "userId must be a positive integer");
      }
      const link = await getLinkByUser(ctx.kv, c.get("project").id, userId);
      return c.json({ userId, address: link?.address ?? null, linkedAt: link?.linkedAt ?? null });
    })
    .post("/players/wallets", guard, async (c) => {
      const { userIds } = await readJsonBody(c, bulkSchema);
      const links = await getLinksByUsers(ctx.kv, c.get("project").id, userIds);
      const wallets: Record<string, string | null> = {};
      for (const id of userIds) wallets[String(id)] = links.get(id)?.address ?? null;
      return c.json({ wallets });
    });
}

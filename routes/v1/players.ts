import type { Address } from "@solana/kit";
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
      const projectId = c.get("project").id;
      const link = await getLinkByUser(ctx.kv, projectId, userId);
      if (link) noteLink(ctx, projectId, userId, link.address);
      return c.json({ userId, address: link?.address ?? null, linkedAt: link?.linkedAt ?? null });
    })
    .post("/players/wallets", guard, async (c) => {
      const { userIds } = await readJsonBody(c, bulkSchema);
      const projectId = c.get("project").id;
      const links = await getLinksByUsers(ctx.kv, projectId, userIds);
      const wallets: Record<string, string | null> = {};
      for (const id of userIds) {
        const address = links.get(id)?.address ?? null;
        if (address) noteLink(ctx, projectId, id, address);
        wallets[String(id)] = address;
      }
      return c.json({ wallets });
    });
}

/**
 * A game reads a player's wallet as they join and pays them later: with the link kept among this
 * instance's recent ones, that payout reads what it checks in one round trip (`read_ahead.ts`).
 */
function noteLink(ctx: AppContext, projectId: string, userId: number, address: string): void {
  const resolved = { recipient: address as Address, userId };
  ctx.tx.links.note(projectId, { userId }, resolved);
  ctx.tx.links.note(projectId, { address: address as Address }, resolved);
}

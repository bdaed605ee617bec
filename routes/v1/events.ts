import { Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import type { AppContext } from "../../lib/context.ts";
import { LATEST, MAX_RECENT_SECONDS, readFeed } from "../../lib/events/feed.ts";
import { readQuery } from "../../http/validate.ts";
import { ApiError } from "../../core/api_error.ts";
import type { V1Env } from "./guard.ts";
import { int32 } from "../../lib/api_fields.ts";

const EVENT_TYPES = [
  "wallet_linked",
  "wallet_unlinked",
  "tx",
  "watch",
  "ping",
  "reward_held",
  "reward_paid",
  "reward_expired",
  "reward_cancelled",
] as const;

/** Query of `GET /v1/events`. */
export const feedQuerySchema = z.object({
  after: z.string().regex(
    new RegExp(`^(0|[1-9][0-9]{0,15}|${LATEST})$`),
    `must be a cursor from an answer's next, or ${LATEST}`,
  ).optional().meta({
    description: `A cursor: an answer's \`next\` (or an event's id), or \`${LATEST}\` for the end`,
    maxLength: 16,
  }),
  recent: int32(0, MAX_RECENT_SECONDS).optional().meta({
    description: "With `after=latest` only: start at the first event recorded in the last " +
      "`recent` seconds instead of at the end",
  }),
  limit: int32(1, 500).default(100),
  types: z.array(z.enum(EVENT_TYPES)).optional().meta({
    description: "Only these types (`next` still moves past the others): repeated " +
      "(`types=tx&types=watch`) or comma-separated (`types=tx,watch`)",
  }),
});

/**
 * `GET /v1/events`: the project's event feed, oldest first, from a cursor. `guard` is the feed's:
 * reads are limited on their own, not counted toward the quotas (`routes/v1/guard.ts`).
 */
export function eventRoutes(ctx: AppContext, guard: MiddlewareHandler<V1Env>): Hono<V1Env> {
  return new Hono<V1Env>().get("/events", guard, async (c) => {
    const query = readQuery(c, feedQuerySchema);
    if (query.recent !== undefined && query.after !== LATEST) {
      throw new ApiError("invalid_request", `recent: only with after=${LATEST}`);
    }
    return c.json(await readFeed(ctx, c.get("project").id, query));
  });
}

import { Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import type { AppContext } from "../../lib/context.ts";
import { readQuery } from "../../http/validate.ts";
import { ULID_PATTERN } from "../../core/ids.ts";
import { listTransactions } from "../../lib/tx/list.ts";
import { TX_STATUSES } from "../../kv/tx_requests.ts";
import type { V1Env } from "./guard.ts";
import { int32 } from "../../lib/api_fields.ts";

/** Query of `GET /v1/tx`. */
export const txListQuerySchema = z.object({
  status: z.enum(TX_STATUSES).optional(),
  after: z.string().regex(ULID_PATTERN, "must be a cursor from an answer's next").optional()
    .meta({ description: "An answer's `next`: the page after it (older requests)", maxLength: 26 }),
  limit: int32(1, 100).default(50),
});

/** `GET /v1/tx`: the project's transaction requests, newest first, a page at a time. */
export function txListRoutes(ctx: AppContext, guard: MiddlewareHandler<V1Env>): Hono<V1Env> {
  return new Hono<V1Env>().get("/tx", guard, async (c) => {
    const query = readQuery(c, txListQuerySchema);
    return c.json(await listTransactions(ctx, c.get("project").id, query));
  });
}

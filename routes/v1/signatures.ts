import { Hono, type MiddlewareHandler } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import { parseSignature } from "../../lib/chain/validation.ts";
import type { V1Env } from "./guard.ts";

/** `GET /v1/signatures/:signature`: live status on the project's cluster, never cached. */
export function signatureRoutes(ctx: AppContext, guard: MiddlewareHandler<V1Env>): Hono<V1Env> {
  return new Hono<V1Env>().get("/signatures/:signature", guard, async (c) => {
    const signature = parseSignature(c.req.param("signature"));
    if (!signature) throw new ApiError("invalid_signature", "Malformed signature");
    return c.json(await ctx.chain.getSignatureStatus(c.get("project").cluster, signature));
  });
}

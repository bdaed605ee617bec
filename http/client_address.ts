/** Which client a request comes from, for the abuse limits (`lib/quota/abuse_limits.ts`). */
import type { Context } from "hono";
import type { AppContext } from "../lib/context.ts";

/** The requesting client's address: the proxy's header when configured, else the connection's. */
export function clientAddress(ctx: AppContext, c: Context): string {
  const header = ctx.config.clientIpHeader;
  const forwarded = header ? c.req.header(header)?.split(",")[0]?.trim() : undefined;
  if (forwarded) return forwarded;
  const info = c.env as Partial<Deno.ServeHandlerInfo<Deno.NetAddr>> | undefined;
  return info?.remoteAddr?.hostname ?? "unknown";
}

import { Hono, type MiddlewareHandler } from "hono";
import { z } from "zod";
import type { Address } from "@solana/kit";
import type { AppContext } from "../../lib/context.ts";
import { ApiError } from "../../core/api_error.ts";
import { readQuery } from "../../http/validate.ts";
import { parseAddress } from "../../lib/chain/validation.ts";
import type { V1Env } from "./guard.ts";
import { addressField } from "../../lib/api_fields.ts";

/** Query of the tokens route. */
export const tokensQuery = z.object({
  mint: addressField.optional().meta({ description: "Only this mint: exactly one entry" }),
});
/** Query of the assets route. */
export const assetsQuery = z.object({
  collection: addressField.optional().meta({ description: "Only assets of this collection" }),
});

/** `GET /v1/wallets/:address/{balance,tokens,assets}` on the project's cluster. */
export function walletRoutes(ctx: AppContext, guard: MiddlewareHandler<V1Env>): Hono<V1Env> {
  return new Hono<V1Env>()
    .get("/wallets/:address/balance", guard, async (c) => {
      const owner = requireAddress(c.req.param("address"), "Wallet address");
      return c.json(await ctx.chain.getSolBalance(c.get("project").cluster, owner));
    })
    .get("/wallets/:address/tokens", guard, async (c) => {
      const owner = requireAddress(c.req.param("address"), "Wallet address");
      const { mint } = readQuery(c, tokensQuery);
      const mintAddress = mint === undefined ? undefined : requireAddress(mint, "Mint");
      const tokens = await ctx.chain.getTokenBalances(
        c.get("project").cluster,
        owner,
        mintAddress,
      );
      if (!tokens) {
        throw new ApiError(
          "invalid_mint",
          "Mint does not exist or is not a token mint on the project's cluster",
        );
      }
      return c.json({ address: owner, tokens });
    })
    .get("/wallets/:address/assets", guard, async (c) => {
      const owner = requireAddress(c.req.param("address"), "Wallet address");
      const { collection } = readQuery(c, assetsQuery);
      const collectionAddress = collection === undefined
        ? undefined
        : requireAddress(collection, "Collection");
      const assets = await ctx.chain.getAssets(c.get("project").cluster, owner, collectionAddress);
      return c.json({ address: owner, assets });
    });
}

function requireAddress(text: string, label: string): Address {
  const value = parseAddress(text);
  if (!value) throw new ApiError("invalid_address", `${label} is not a valid Solana address`);
  return value;
}

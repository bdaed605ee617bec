import { clientAddress } from "../../http/client_address.ts";
import { Hono } from "hono";
import { z } from "zod";
import type { AppContext } from "../../lib/context.ts";
import {
  clearCookie,
  readSignedCookie,
  setSignedCookie,
  WALLET_SIGNIN_COOKIE,
} from "../../http/cookies.ts";
import { startDeveloperSession } from "../../http/developer_session.ts";
import { dashboardNextPath } from "../../lib/auth/next_path.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import {
  assertSignedBy,
  createSiwsMessage,
  createSiwsNonce,
  decodeAddress,
} from "../../lib/auth/siws.ts";
import { ApiError } from "../../core/api_error.ts";
import { readJsonBody } from "../../http/validate.ts";
import { log } from "../../core/log.ts";
import { getDeveloper, recordDeveloperSignIn } from "../../kv/developers.ts";
import { spendSignIn } from "../../kv/used_signins.ts";
import { sha256Hex } from "../../core/hash.ts";

const challengeBody = z.object({ address: z.string(), next: z.string().nullish() });
const verifyBody = z.object({ signature: z.string() });
const pendingSchema = z.object({ address: z.string(), message: z.string(), next: z.string() });

/** The Chain ID line of the dashboard message (the account is the same on every cluster). */
export const DASHBOARD_CHAIN_ID = "mainnet";

/** Developer sign-in with a wallet: `/auth/wallet/challenge` and `/auth/wallet/verify`. */
export function walletSignInRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  return new Hono()
    .post("/auth/wallet/challenge", origin, async (c) => {
      // Counted in memory: the spec has this route write nothing to the database.
      ctx.abuse.takeLocal("signin_challenge", clientAddress(ctx, c));
      const body = await readJsonBody(c, challengeBody);
      if (!decodeAddress(body.address)) {
        throw new ApiError(400, "invalid_address", "address is not a Solana address");
      }
      const now = ctx.clock.now();
      const message = createSiwsMessage({
        host: new URL(ctx.config.baseUrl).host,
        address: body.address,
        statement:
          `Sign in to the ${ctx.config.serviceName} dashboard. Signing is free and does not send a transaction.`,
        uri: `${ctx.config.baseUrl}/dashboard`,
        chainId: DASHBOARD_CHAIN_ID,
        nonce: createSiwsNonce(),
        issuedAt: now,
        expiresAt: now + WALLET_SIGNIN_COOKIE.maxAgeMs,
      });
      // Nothing is stored server-side: the signed cookie is the whole pending sign-in.
      await setSignedCookie(ctx, c, WALLET_SIGNIN_COOKIE, {
        address: body.address,
        message,
        next: dashboardNextPath(body.next),
      });
      return c.json({ message });
    })
    .post("/auth/wallet/verify", origin, async (c) => {
      const pending = pendingSchema.safeParse(
        await readSignedCookie(ctx, c, WALLET_SIGNIN_COOKIE),
      );
      // Deleted before anything else, so one pending sign-in serves one attempt.
      clearCookie(c, WALLET_SIGNIN_COOKIE);
      // The browser drops the cookie, but a copy of it must not work twice either.
      const spent = pending.success &&
        await spendSignIn(ctx.kv, await sha256Hex(pending.data.message), {
          now: ctx.clock.now(),
          ttlMs: WALLET_SIGNIN_COOKIE.maxAgeMs,
        });
      if (!spent) {
        throw new ApiError(
          400,
          "challenge_expired",
          "The sign-in request is missing, expired or used",
        );
      }
      const { address, message, next } = pending.data!;
      const { signature } = await readJsonBody(c, verifyBody);
      assertSignedBy(message, signature, address);
      if (!(await getDeveloper(ctx.kv, address))) {
        await ctx.abuse.take("developer_account", clientAddress(ctx, c));
      }
      const { created } = await recordDeveloperSignIn(ctx.kv, address, ctx.clock.now());
      await startDeveloperSession(ctx, c, address);
      log("info", "Developer signed in", { developer: address, created });
      return c.json({ next: dashboardNextPath(next) });
    });
}

/** Developer sign-in routes: the flow itself is `lib/auth/developer_signin.ts`. */
import { Hono } from "hono";
import { z } from "zod";
import type { AppContext } from "../../lib/context.ts";
import { clientAddress } from "../../http/client_address.ts";
import {
  clearCookie,
  readSignedCookie,
  setSignedCookie,
  WALLET_SIGNIN_COOKIE,
} from "../../http/cookies.ts";
import { startDeveloperSession } from "../../http/developer_session.ts";
import { sameOrigin } from "../../http/same_origin.ts";
import { readJsonBody } from "../../http/validate.ts";
import { log } from "../../core/log.ts";
import {
  completeDeveloperSignIn,
  createDeveloperChallenge,
  spendPendingSignIn,
} from "../../lib/auth/developer_signin.ts";

const challengeBody = z.object({ address: z.string(), next: z.string().nullish() });
const verifyBody = z.object({ signature: z.string() });

/** Developer sign-in with a wallet: `/auth/wallet/challenge` and `/auth/wallet/verify`. */
export function walletSignInRoutes(ctx: AppContext): Hono {
  const origin = sameOrigin({ baseUrl: ctx.config.baseUrl });
  return new Hono()
    .post("/auth/wallet/challenge", origin, async (c) => {
      // Counted in memory: the spec has this route write nothing to the database.
      ctx.abuse.takeLocal("signin_challenge", clientAddress(ctx, c));
      const body = await readJsonBody(c, challengeBody);
      const pending = createDeveloperChallenge(ctx, body);
      await setSignedCookie(ctx, c, WALLET_SIGNIN_COOKIE, pending);
      return c.json({ message: pending.message });
    })
    .post("/auth/wallet/verify", origin, async (c) => {
      const raw = await readSignedCookie(ctx, c, WALLET_SIGNIN_COOKIE);
      // The browser drops the cookie at once; the store makes sure a copy of it fails too.
      clearCookie(c, WALLET_SIGNIN_COOKIE);
      const pending = await spendPendingSignIn(ctx, raw);
      const { signature } = await readJsonBody(c, verifyBody);
      const { address, next, created } = await completeDeveloperSignIn(ctx, pending, {
        signature,
        client: clientAddress(ctx, c),
      });
      await startDeveloperSession(ctx, c, address);
      log("info", "Developer signed in", { developer: address, created });
      return c.json({ next });
    });
}

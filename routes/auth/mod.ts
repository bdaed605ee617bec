import { Hono } from "hono";
import type { AppContext } from "../../lib/context.ts";
import { idpRoutes } from "./idp.ts";
import { logoutRoutes } from "./logout.ts";
import { walletSignInRoutes } from "./wallet.ts";

/** Sign-in and sign-out under `/auth`: players through the identity provider, developers with a wallet. */
export function authRoutes(ctx: AppContext): Hono {
  return new Hono()
    .route("/", idpRoutes(ctx))
    .route("/", walletSignInRoutes(ctx))
    .route("/", logoutRoutes(ctx));
}

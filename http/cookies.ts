/** Signed, expiring cookies: every session and pending sign-in the browser carries. */
import { SIGNIN_TTL_MS } from "../lib/auth/developer_signin.ts";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { AppContext } from "../lib/context.ts";
import { signToken, verifyToken } from "../lib/crypto/signed_token.ts";

/** One kind of signed cookie: its name, a signing purpose of its own, and its lifetime. */
export interface SignedCookie {
  name: string;
  /** Distinct per cookie, so a value signed for one cookie is refused by every other. */
  purpose: string;
  maxAgeMs: number;
}

/** Player session on one project's linking page (spec "Player session"). */
export const PLAYER_SESSION_COOKIE: SignedCookie = {
  name: "__Host-svc_session",
  purpose: "player-session",
  maxAgeMs: 60 * 60_000,
};
/** Pending identity-provider sign-in: state, PKCE verifier, next and project. */
export const OAUTH_FLOW_COOKIE: SignedCookie = {
  name: "__Host-svc_oauth",
  purpose: "oauth-flow",
  maxAgeMs: 10 * 60_000,
};
/**
 * The linking page a player's sign-in started from, kept longer than the flow: the spec sends a
 * callback without a valid flow cookie to `/dashboard?error=oauth_state_mismatch`, and from there
 * the player is sent back to this page instead of the developers' sign-in.
 */
export const LINK_RETURN_COOKIE: SignedCookie = {
  name: "__Host-svc_link_return",
  purpose: "link-return",
  maxAgeMs: 24 * 60 * 60_000,
};
/** Pending connection of a game through Roblox OAuth: state, PKCE verifier, project and member. */
export const ROBLOX_CONNECT_COOKIE: SignedCookie = {
  name: "__Host-svc_connect",
  purpose: "roblox-connect",
  maxAgeMs: 10 * 60_000,
};
/** Pending dashboard sign-in: address, message and next; nothing is stored server-side. */
export const WALLET_SIGNIN_COOKIE: SignedCookie = {
  name: "__Host-svc_signin",
  purpose: "wallet-signin",
  maxAgeMs: SIGNIN_TTL_MS,
};
/** Developer session for the dashboard. */
export const DEVELOPER_SESSION_COOKIE: SignedCookie = {
  name: "__Host-svc_dev",
  purpose: "developer-session",
  maxAgeMs: 12 * 60 * 60_000,
};

// `__Host-` cookies must be Secure, Path=/ and have no Domain, or browsers drop them (deletions too).
const ATTRIBUTES = "Path=/; HttpOnly; Secure; SameSite=Lax";

/** Signs `payload` with an expiry from the app clock and sets the cookie on the response. */
export async function setSignedCookie<T extends object>(
  ctx: AppContext,
  c: Context,
  cookie: SignedCookie,
  payload: T,
): Promise<void> {
  const exp = ctx.clock.now() + cookie.maxAgeMs;
  const token = await signToken(ctx.keys, cookie.purpose, { ...payload, exp });
  const maxAge = Math.floor(cookie.maxAgeMs / 1000);
  c.header("set-cookie", `${cookie.name}=${token}; Max-Age=${maxAge}; ${ATTRIBUTES}`, {
    append: true,
  });
}

/** Returns the cookie's payload when it is present, authentic and unexpired; otherwise null. */
export async function readSignedCookie<T extends object>(
  ctx: AppContext,
  c: Context,
  cookie: SignedCookie,
): Promise<T | null> {
  const payload = await verifyToken<T & { exp?: unknown }>(
    ctx.keys,
    cookie.purpose,
    getCookie(c, cookie.name),
  );
  if (!payload || typeof payload !== "object") return null;
  if (typeof payload.exp !== "number" || payload.exp <= ctx.clock.now()) return null;
  return payload;
}

/** Tells the browser to drop the cookie. */
export function clearCookie(c: Context, cookie: SignedCookie): void {
  c.header("set-cookie", `${cookie.name}=; Max-Age=0; ${ATTRIBUTES}`, { append: true });
}

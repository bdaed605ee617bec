/** The developer session: the dashboard account is the wallet address that signed in. */
import type { Context } from "hono";
import type { AppContext } from "../lib/context.ts";
import { clearCookie, DEVELOPER_SESSION_COOKIE } from "./cookies.ts";
import { endSession, openSession, readSession } from "./sessions.ts";
import { deleteDeveloperSessions } from "../kv/sessions.ts";

/** Starts the developer's 12-hour session. */
export async function startDeveloperSession(
  ctx: AppContext,
  c: Context,
  address: string,
): Promise<void> {
  await openSession(ctx, c, DEVELOPER_SESSION_COOKIE, { kind: "developer", address });
}

/** Returns the signed-in developer's wallet address, or null without an open session. */
export async function getDeveloperSession(ctx: AppContext, c: Context): Promise<string | null> {
  const session = await readSession(ctx, c, DEVELOPER_SESSION_COOKIE);
  return session?.kind === "developer" ? session.address : null;
}

/** Ends this browser's developer session. */
export async function clearDeveloperSession(ctx: AppContext, c: Context): Promise<void> {
  await endSession(ctx, c, DEVELOPER_SESSION_COOKIE);
}

/** Ends every session of the developer, on every browser; returns how many were open. */
export async function endAllDeveloperSessions(
  ctx: AppContext,
  c: Context,
  address: string,
): Promise<number> {
  const ended = await deleteDeveloperSessions(ctx.kv, address);
  clearCookie(c, DEVELOPER_SESSION_COOKIE);
  return ended;
}

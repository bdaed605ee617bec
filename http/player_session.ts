/** The player session: who signed in through the identity provider, on which project's page. */
import type { Context } from "hono";
import type { AppContext } from "../lib/context.ts";
import { PLAYER_SESSION_COOKIE } from "./cookies.ts";
import { endSession, openSession, readSession } from "./sessions.ts";
import type { Player } from "../kv/sessions.ts";

/** Starts (or replaces) the player's session, bound to one project, for one hour. */
export async function startPlayerSession(
  ctx: AppContext,
  c: Context,
  session: { projectId: string; user: Player },
): Promise<void> {
  await openSession(ctx, c, PLAYER_SESSION_COOKIE, { kind: "player", ...session });
}

/** Returns the signed-in player for `projectId`; a session of another project counts as none. */
export async function getPlayerSession(
  ctx: AppContext,
  c: Context,
  projectId: string,
): Promise<Player | null> {
  const session = await readSession(ctx, c, PLAYER_SESSION_COOKIE);
  return session?.kind === "player" && session.projectId === projectId ? session.user : null;
}

/** Ends this browser's player session. */
export async function clearPlayerSession(ctx: AppContext, c: Context): Promise<void> {
  await endSession(ctx, c, PLAYER_SESSION_COOKIE);
}

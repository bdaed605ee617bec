/** The player session: who signed in through the identity provider, on which project's page. */
import type { Context } from "hono";
import { z } from "zod";
import type { AppContext } from "../context.ts";
import {
  clearCookie,
  PLAYER_SESSION_COOKIE,
  readSignedCookie,
  setSignedCookie,
} from "./cookies.ts";

/** The spec's Player object, kept in the session so reading it needs no identity-provider call. */
export interface Player {
  id: number;
  name: string;
  displayName: string;
  avatar: string | null;
}

const sessionSchema = z.object({
  projectId: z.string(),
  user: z.object({
    id: z.number().int().positive(),
    name: z.string(),
    displayName: z.string(),
    avatar: z.string().nullable(),
  }),
});

/** Starts (or replaces) the player's session, bound to one project, for one hour. */
export async function startPlayerSession(
  ctx: AppContext,
  c: Context,
  session: { projectId: string; user: Player },
): Promise<void> {
  await setSignedCookie(ctx, c, PLAYER_SESSION_COOKIE, {
    projectId: session.projectId,
    user: session.user,
  });
}

/** Returns the signed-in player for `projectId`; a session of another project counts as none. */
export async function getPlayerSession(
  ctx: AppContext,
  c: Context,
  projectId: string,
): Promise<Player | null> {
  const parsed = sessionSchema.safeParse(await readSignedCookie(ctx, c, PLAYER_SESSION_COOKIE));
  if (!parsed.success || parsed.data.projectId !== projectId) return null;
  return parsed.data.user;
}

/** Ends the player session. */
export function clearPlayerSession(c: Context): void {
  clearCookie(c, PLAYER_SESSION_COOKIE);
}

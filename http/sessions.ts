/**
 * Sessions behind the signed session cookies. The cookie carries the session id (and, for reading
 * convenience, what it stands for), but the store decides: a session counts only while its record
 * exists and is unexpired, so signing out (or signing out everywhere) ends every copy of the cookie.
 */
import type { Context } from "hono";
import type { AppContext } from "../lib/context.ts";
import { randomToken } from "../core/ids.ts";
import {
  createSession,
  deleteSession,
  getSession,
  type Session,
  type SessionSubject,
} from "../kv/sessions.ts";
import { clearCookie, readSignedCookie, setSignedCookie, type SignedCookie } from "./cookies.ts";

function sessionIdOf(payload: { sid?: unknown } | null): string | null {
  return typeof payload?.sid === "string" ? payload.sid : null;
}

/** Opens a session for `subject`, replacing the one this browser held under `cookie`. */
export async function openSession(
  ctx: AppContext,
  c: Context,
  cookie: SignedCookie,
  subject: SessionSubject,
): Promise<void> {
  const previous = sessionIdOf(await readSignedCookie(ctx, c, cookie));
  if (previous) await deleteSession(ctx.kv, previous);
  const now = ctx.clock.now();
  const id = randomToken(32);
  await createSession(
    ctx.kv,
    { ...subject, id, createdAt: now, expiresAt: now + cookie.maxAgeMs },
    now,
  );
  const { kind: _kind, ...fields } = subject;
  await setSignedCookie(ctx, c, cookie, { sid: id, ...fields });
}

/** The open session named by `cookie`, or null (no cookie, forged, expired or ended). */
export async function readSession(
  ctx: AppContext,
  c: Context,
  cookie: SignedCookie,
): Promise<Session | null> {
  const id = sessionIdOf(await readSignedCookie(ctx, c, cookie));
  return id ? await getSession(ctx.kv, id, ctx.clock.now()) : null;
}

/** Ends the session named by `cookie` in the store and tells the browser to drop the cookie. */
export async function endSession(ctx: AppContext, c: Context, cookie: SignedCookie): Promise<void> {
  const id = sessionIdOf(await readSignedCookie(ctx, c, cookie));
  if (id) await deleteSession(ctx.kv, id);
  clearCookie(c, cookie);
}

/**
 * Server-side sessions: the cookie names a session, the store says whether it is still open. Ending
 * a session deletes its record, so a copied cookie stops working at once on every instance.
 */

/** The spec's Player object, kept in the session so reading it needs no identity-provider call. */
export interface Player {
  id: number;
  name: string;
  displayName: string;
  avatar: string | null;
}

/** What a session stands for: a developer's dashboard, or a player on one project's page. */
export type SessionSubject =
  | { kind: "developer"; address: string }
  | {
    kind: "player";
    projectId: string;
    user: Player;
  };

/** A session as stored. */
export type Session = SessionSubject & { id: string; createdAt: number; expiresAt: number };

/** Key of a session record. */
function sessionKey(id: string): Deno.KvKey {
  return ["sessions", id];
}
/** Key of a developer's session index entry (value: session id), for signing out everywhere. */
function developerSessionKey(address: string, id: string): Deno.KvKey {
  return ["sessions_by_developer", address, id];
}

/** Records a new session; `expireIn` only lets KV drop it later, `expiresAt` is what counts. */
export async function createSession(kv: Deno.Kv, session: Session, now: number): Promise<void> {
  const expireIn = Math.max(1, session.expiresAt - now);
  const key = sessionKey(session.id);
  const atomic = kv.atomic().check({ key, versionstamp: null }).set(key, session, { expireIn });
  if (session.kind === "developer") {
    atomic.set(developerSessionKey(session.address, session.id), session.id, { expireIn });
  }
  if (!(await atomic.commit()).ok) throw new Error("Cannot create session: id already exists");
}

/** Returns the open session, or null when it is unknown, ended or expired. */
export async function getSession(kv: Deno.Kv, id: string, now: number): Promise<Session | null> {
  // Ours are 43 characters; a longer id cannot exist and must not reach KV's key size limit.
  if (id.length === 0 || id.length > 64) return null;
  const session = (await kv.get<Session>(sessionKey(id))).value;
  return session && session.expiresAt > now ? session : null;
}

/** Ends one session (nothing happens when it is already gone). */
export async function deleteSession(kv: Deno.Kv, id: string): Promise<void> {
  if (id.length === 0 || id.length > 64) return;
  const entry = await kv.get<Session>(sessionKey(id));
  const atomic = kv.atomic().delete(sessionKey(id));
  if (entry.value?.kind === "developer") {
    atomic.delete(developerSessionKey(entry.value.address, id));
  }
  await atomic.commit();
}

/** Ends every session of the developer; returns how many were open. */
export async function deleteDeveloperSessions(kv: Deno.Kv, address: string): Promise<number> {
  let ended = 0;
  let atomic = kv.atomic();
  let pending = 0;
  for await (const entry of kv.list<string>({ prefix: ["sessions_by_developer", address] })) {
    atomic.delete(sessionKey(entry.value)).delete(entry.key);
    ended++;
    // Two deletions per session; stay well inside a commit's mutation limit.
    if (++pending === 100) {
      await atomic.commit();
      atomic = kv.atomic();
      pending = 0;
    }
  }
  if (pending > 0) await atomic.commit();
  return ended;
}

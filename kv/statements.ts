/**
 * Statements a signed-in developer signs with their wallet before a sensitive dashboard action (a
 * withdrawal, a key export): single-use nonces bound to the action, the project, the developer
 * and the exact message, as linking challenges are (`nonces.ts`).
 */

/** What a statement confirms. */
export type StatementPurpose = "withdraw" | "key_export";

/** A statement waiting for its signature, as stored. */
export interface PendingStatement {
  nonce: string;
  purpose: StatementPurpose;
  projectId: string;
  /** The wallet that must sign: the developer who asked. */
  developer: string;
  /** The exact text the wallet must sign. */
  message: string;
  /** What the action needs once confirmed (a withdrawal's lines); JSON-safe. */
  payload: Record<string, unknown>;
  expiresAt: number;
}

function statementKey(nonce: string): Deno.KvKey {
  return ["statements", nonce];
}

/** Stores a new statement; `expireIn` only lets KV drop it later, `expiresAt` is what counts. */
export async function createStatement(
  kv: Deno.Kv,
  record: PendingStatement,
  now: number,
): Promise<void> {
  const key = statementKey(record.nonce);
  const result = await kv.atomic()
    .check({ key, versionstamp: null })
    .set(key, record, { expireIn: Math.max(1, record.expiresAt - now) })
    .commit();
  if (!result.ok) throw new Error("Cannot create statement: nonce already exists");
}

/** Returns the statement without using it (to show it), or null; unknown-length nonces are none. */
export async function getStatement(kv: Deno.Kv, nonce: string): Promise<PendingStatement | null> {
  if (nonce.length === 0 || nonce.length > 128) return null;
  return (await kv.get<PendingStatement>(statementKey(nonce))).value;
}

/**
 * Deletes the statement and returns it, or null when it is unknown or another request used it
 * first; `also` adds to the same commit what the use does (its record, its audit entry), so the
 * use and its effect are seen together or not at all.
 */
export async function consumeStatement(
  kv: Deno.Kv,
  nonce: string,
  also?: (op: Deno.AtomicOperation, record: PendingStatement) => void,
): Promise<PendingStatement | null> {
  if (nonce.length === 0 || nonce.length > 128) return null;
  const entry = await kv.get<PendingStatement>(statementKey(nonce));
  if (!entry.value) return null;
  // The versionstamp check makes the delete the single point where exactly one use wins.
  const op = kv.atomic().check(entry).delete(entry.key);
  also?.(op, entry.value);
  const result = await op.commit();
  return result.ok ? entry.value : null;
}

/**
 * Signed statements: before a withdrawal or a key export, the signed-in developer signs with their
 * wallet a message, in the dashboard sign-in's layout, whose statement line says exactly what they
 * confirm (the project, the amounts, mints and recipient). The message is stored under a nonce
 * (`kv/statements.ts`) for 10 minutes; the first attempt to use it consumes it, even a failed one,
 * as a linking challenge is, so a captured signature cannot serve twice.
 */
import type { Clock } from "../../core/clock.ts";
import type { Cluster } from "../../core/cluster.ts";
import { ApiError } from "../../core/api_error.ts";
import type { Config } from "../config.ts";
import {
  consumeStatement,
  createStatement,
  getStatement,
  type PendingStatement,
  type StatementPurpose,
} from "../../kv/statements.ts";
import { assertSignedBy, createSiwsMessage, createSiwsNonce, isSignedBy } from "./siws.ts";

/** What statements take of the context. */
interface StatementContext {
  kv: Deno.Kv;
  clock: Clock;
  config: Config;
}

/** Which statement, for whom: every use names all of it. */
interface StatementRef {
  nonce: string;
  purpose: StatementPurpose;
  projectId: string;
  developer: string;
}

/** What each kind of statement authorises, in its first line. */
const AUTHORISES: Record<StatementPurpose, string> = {
  withdraw: "a withdrawal",
  key_export: "exporting a wallet's secret key",
};

/** How long a statement can be signed. */
export const STATEMENT_TTL_MS = 10 * 60_000;

/** Issues a statement for `developer` to sign about `project`; `statement` is its one line. */
export async function issueStatement(
  ctx: StatementContext,
  request: {
    purpose: StatementPurpose;
    project: { id: string; cluster: Cluster };
    developer: string;
    statement: string;
    payload: Record<string, unknown>;
  },
): Promise<PendingStatement> {
  const now = ctx.clock.now();
  const nonce = createSiwsNonce();
  const expiresAt = now + STATEMENT_TTL_MS;
  const message = createSiwsMessage({
    host: new URL(ctx.config.baseUrl).host,
    authorises: AUTHORISES[request.purpose],
    address: request.developer,
    statement: request.statement,
    uri: `${ctx.config.baseUrl}/dashboard/projects/${request.project.id}`,
    chainId: request.project.cluster,
    nonce,
    issuedAt: now,
    expiresAt,
  });
  const record: PendingStatement = {
    nonce,
    purpose: request.purpose,
    projectId: request.project.id,
    developer: request.developer,
    message,
    payload: request.payload,
    expiresAt,
  };
  await createStatement(ctx.kv, record, now);
  return record;
}

/** The statement `ref` names, unused, unexpired and for this developer and project; else null. */
export async function readStatement(
  ctx: StatementContext,
  ref: StatementRef,
): Promise<PendingStatement | null> {
  const record = await getStatement(ctx.kv, ref.nonce);
  return record && matches(ctx, record, ref) ? record : null;
}

/**
 * Consumes the statement `ref` names (even when the rest fails), then checks it is this
 * developer's for this project and action and unexpired (400 `challenge_expired`), then that
 * `signature` is their wallet's over its message (400 `invalid_signature`); returns it. `effect`
 * adds what the confirmed action records to the commit that consumes it, only when both hold.
 */
export async function spendStatement(
  ctx: StatementContext,
  ref: StatementRef & { signature: string },
  effect?: (op: Deno.AtomicOperation, record: PendingStatement) => void,
): Promise<PendingStatement> {
  const valid = (record: PendingStatement) =>
    matches(ctx, record, ref) && isSignedBy(record.message, ref.signature, record.developer);
  const record = await consumeStatement(ctx.kv, ref.nonce, (op, record) => {
    if (effect && valid(record)) effect(op, record);
  });
  if (!record || !matches(ctx, record, ref)) throw statementGone();
  assertSignedBy(record.message, ref.signature, record.developer);
  return record;
}

/** 400 `challenge_expired`: the statement is unknown, used, expired or someone else's. */
export function statementGone(): ApiError {
  return new ApiError(
    "challenge_expired",
    "The statement to sign is unknown, used or expired: ask for a new one",
  );
}

function matches(ctx: StatementContext, record: PendingStatement, ref: StatementRef): boolean {
  return record.purpose === ref.purpose && record.projectId === ref.projectId &&
    record.developer === ref.developer && record.expiresAt > ctx.clock.now();
}

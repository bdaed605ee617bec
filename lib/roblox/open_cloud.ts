/**
 * Open Cloud calls a connected game makes with its OAuth grant (`Authorization: Bearer`): the
 * universe's secrets (public key, create or update) and restarting its servers. A 401 refreshes
 * the token once and tries again (`access_token.ts`); any other failure is a 502
 * `roblox_request_failed` naming Roblox's answer, without any secret in it.
 */
import { ApiError } from "../../core/api_error.ts";
import { base64 } from "@scure/base";
import type { BaseContext } from "../base_context.ts";
import { getAccessToken } from "./access_token.ts";

const TIMEOUT_MS = 10_000;

/** A universe's public key for sealing its secrets. */
export interface SecretsPublicKey {
  key: Uint8Array;
  keyId: string;
}

/** A value sealed for the universe's secrets, and the host it may be sent to. */
export interface SealedSecret {
  id: string;
  sealed: string;
  keyId: string;
  domain: string;
}

function failed(what: string, detail: string): ApiError {
  return new ApiError("roblox_request_failed", `Cannot ${what}: ${detail}`);
}

async function detailOf(res: Response): Promise<string> {
  const body = await res.json().catch(() => null) as Record<string, unknown> | null;
  const said = body?.detail ?? body?.message;
  return `Roblox answered ${res.status}${
    typeof said === "string" ? ` (${said.slice(0, 200)})` : ""
  }`;
}

/** One Open Cloud request for the project's connected game, its token refreshed once on a 401. */
async function openCloud(
  ctx: BaseContext,
  projectId: string,
  request: { what: string; method: string; path: string; body?: unknown },
): Promise<Response> {
  let stale: string | undefined;
  for (let round = 0; round < 2; round++) {
    const token = await getAccessToken(ctx, projectId, stale ? { stale } : {});
    if (token.kind === "none") throw failed(request.what, "the game is not connected with Roblox");
    if (token.kind === "lost") {
      throw failed(request.what, "the Roblox connection was lost: reconnect the game");
    }
    if (token.kind === "unavailable") throw failed(request.what, token.reason);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(`${ctx.config.publishUrl}${request.path}`, {
        method: request.method,
        headers: {
          authorization: `Bearer ${token.token}`,
          ...(request.body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        redirect: "manual",
        signal: controller.signal,
      });
    } catch (error) {
      throw failed(request.what, `Roblox could not be reached (${error})`);
    } finally {
      clearTimeout(timer);
    }
    if (res.status !== 401) return res;
    await res.body?.cancel();
    stale = token.token;
  }
  throw failed(request.what, "Roblox refused the grant's access token");
}

function universePath(universeId: string): string {
  return `/cloud/v2/universes/${encodeURIComponent(universeId)}`;
}

/** The universe's public key for its secrets. */
export async function fetchSecretsPublicKey(
  ctx: BaseContext,
  projectId: string,
  universeId: string,
): Promise<SecretsPublicKey> {
  const what = "read the game's secrets key";
  const res = await openCloud(ctx, projectId, {
    what,
    method: "GET",
    path: `${universePath(universeId)}/secrets/public-key`,
  });
  if (!res.ok) throw failed(what, await detailOf(res));
  const body = await res.json().catch(() => null) as { secret?: unknown; key_id?: unknown } | null;
  let key: Uint8Array | null = null;
  try {
    key = typeof body?.secret === "string" ? base64.decode(body.secret) : null;
  } catch {
    // Not base64: refused below like any other wrong key.
  }
  if (!key || key.length !== 32 || typeof body?.key_id !== "string") {
    throw failed(what, "Roblox answered an unexpected public key");
  }
  return { key, keyId: body.key_id };
}

/** Creates the secret, or updates it when the game already has one with that id (409). */
export async function putSecret(
  ctx: BaseContext,
  projectId: string,
  input: { universeId: string; secret: SealedSecret },
): Promise<"created" | "updated"> {
  const what = "write the game's secret";
  const { id, sealed, keyId, domain } = input.secret;
  const base = `${universePath(input.universeId)}/secrets`;
  const created = await openCloud(ctx, projectId, {
    what,
    method: "POST",
    path: base,
    body: { id, secret: sealed, key_id: keyId, domain },
  });
  if (created.status === 201 || created.ok) {
    await created.body?.cancel();
    return "created";
  }
  if (created.status !== 409) throw failed(what, await detailOf(created));
  await created.body?.cancel();
  const updated = await openCloud(ctx, projectId, {
    what,
    method: "PATCH",
    path: `${base}/${encodeURIComponent(id)}`,
    body: { secret: sealed, key_id: keyId, domain },
  });
  if (!updated.ok) throw failed(what, await detailOf(updated));
  await updated.body?.cancel();
  return "updated";
}

/** Restarts the game's servers, letting players move to new ones over `bleedOffMinutes`. */
export async function restartServers(
  ctx: BaseContext,
  projectId: string,
  input: { universeId: string; bleedOffMinutes: number },
): Promise<void> {
  const what = "restart the game's servers";
  const res = await openCloud(ctx, projectId, {
    what,
    method: "POST",
    path: `${universePath(input.universeId)}:restartServers`,
    body: { bleedOffServers: true, bleedOffDurationMinutes: input.bleedOffMinutes },
  });
  if (!res.ok) throw failed(what, await detailOf(res));
  await res.body?.cancel();
}

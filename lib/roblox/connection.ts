/**
 * Connecting a game through Roblox OAuth 2.0 (authorization code with PKCE) from its project's
 * settings, and ending the connection.
 *
 * Start: the member (owner or admin) is sent to Roblox's consent page with `CONNECT_SCOPES`; the
 * route keeps the state and PKCE verifier in a signed cookie. Finish: the code is exchanged, the
 * experiences granted are read from `token/resources` and the Roblox account from userinfo, and
 * the connection (project settings) and its sealed tokens (`kv/roblox_tokens.ts`) are written in
 * one commit with the audit entry. One experience granted is used at once; of several, the
 * member picks one (`chooseUniverse`). A new connection replaces the old one, whose refresh token
 * is then revoked. Disconnecting revokes the refresh token at Roblox, then forgets both.
 */
import { ApiError } from "../../core/api_error.ts";
import { ulid } from "../../core/ids.ts";
import { log } from "../../core/log.ts";
import type { Project, RobloxConnection } from "../../kv/projects.ts";
import {
  getRobloxTokensEntry,
  type RobloxTokens,
  updateRobloxConnection,
} from "../../kv/roblox_tokens.ts";
import {
  authorizeUrl,
  createPkcePair,
  exchangeCode,
  fetchGrantedUniverses,
  fetchPlayer,
  IdpError,
  revokeToken,
} from "../auth/idp_client.ts";
import type { OauthApp } from "../auth/oauth_app.ts";
import { decryptSecretText } from "../crypto/encryption.ts";
import type { BaseContext } from "../base_context.ts";
import { sealTokens, tokenBinding } from "./access_token.ts";
import {
  appOfConnection,
  CONNECT_SCOPES,
  connectAppFor,
  connectRedirectUri,
} from "./connect_app.ts";

/** The pending connection the route keeps in its signed cookie, and where to send the member. */
export interface ConnectStart {
  authorizeUrl: string;
  state: string;
  verifier: string;
}

function noApp(): ApiError {
  return new ApiError(
    "connect_app_missing",
    "Save the client ID and secret of your Roblox OAuth app for connecting the game first",
  );
}

/** Begins connecting: the consent page URL with a fresh state and PKCE pair. */
export async function startConnection(ctx: BaseContext, project: Project): Promise<ConnectStart> {
  const found = await connectAppFor(ctx, project);
  if (!found) throw noApp();
  const pkce = await createPkcePair();
  const state = crypto.randomUUID();
  return {
    state,
    verifier: pkce.verifier,
    authorizeUrl: authorizeUrl(ctx.config.idpUrl, {
      clientId: found.app.clientId,
      redirectUri: connectRedirectUri(ctx.config.baseUrl),
      state,
      codeChallenge: pkce.challenge,
      scope: CONNECT_SCOPES.join(" "),
    }),
  };
}

/**
 * Finishes connecting with the code Roblox sent back; answers the connection saved. 502
 * `roblox_connect_failed` when Roblox refuses the code or cannot be reached, 400
 * `no_experience_granted` when the member granted no experience.
 */
export async function finishConnection(
  ctx: BaseContext,
  input: { project: Project; developer: string; code: string; verifier: string },
): Promise<RobloxConnection> {
  const { project, developer } = input;
  const found = await connectAppFor(ctx, project);
  if (!found) throw noApp();
  const { app } = found;
  let granted: { tokens: Awaited<ReturnType<typeof exchangeCode>>; universeIds: string[] };
  let robloxUser: RobloxConnection["robloxUser"] = null;
  try {
    const tokens = await exchangeCode(ctx.config.idpUrl, app, {
      code: input.code,
      redirectUri: connectRedirectUri(ctx.config.baseUrl),
      verifier: input.verifier,
    });
    granted = {
      tokens,
      universeIds: await fetchGrantedUniverses(ctx.config.idpUrl, app, tokens.accessToken),
    };
    const player = await fetchPlayer(ctx.config.idpUrl, tokens.accessToken).catch(() => null);
    if (player) robloxUser = { id: player.id, name: player.name };
  } catch (error) {
    if (!(error instanceof IdpError)) throw error;
    log("warn", "Connecting the game failed", { projectId: project.id, reason: error.message });
    throw new ApiError("roblox_connect_failed", `Cannot connect the game: ${error.message}`);
  }
  const { tokens, universeIds } = granted;
  if (!tokens.refreshToken || universeIds.length === 0) {
    await revokeToken(ctx.config.idpUrl, app, tokens.refreshToken ?? tokens.accessToken);
    throw new ApiError(
      "no_experience_granted",
      "Cannot connect the game: pick its experience on Roblox's consent page",
    );
  }
  const now = ctx.clock.now();
  const grantId = ulid(now);
  const sealed = await sealTokens(ctx, project.id, {
    grantId,
    accessToken: tokens.accessToken,
    refreshToken: tokens.refreshToken,
    expiresIn: tokens.expiresIn,
    now,
  });
  const before = await getRobloxTokensEntry(ctx.kv, project.id);
  let previous: { project: Project; connection: RobloxConnection } | null = null;
  let connection: RobloxConnection | null = null;
  await updateRobloxConnection(ctx.kv, project.id, (current) => {
    if (current.deletedAt !== null) return null;
    const old = current.settings.robloxConnection ?? null;
    previous = old ? { project: current, connection: old } : null;
    const universeId = universeIds.length === 1 ? universeIds[0]! : null;
    connection = {
      grantId,
      app: found.kind,
      clientId: app.clientId,
      connectedBy: developer,
      robloxUser,
      connectedAt: now,
      scopes: tokens.scopes,
      universeIds,
      universeId,
      status: "active",
      lostAt: null,
      // The key installed in that game is still there when the same game is connected again.
      gameKey: old?.universeId === universeId ? old?.gameKey ?? null : null,
    };
    return { ...current, settings: { ...current.settings, robloxConnection: connection } };
  }, {
    tokens: sealed,
    sealedUnder: ctx.keys.current.id,
    audit: (saved) => ({
      projectId: project.id,
      actor: developer,
      action: "roblox_connected",
      details: {
        universeId: saved.settings.robloxConnection?.universeId ?? null,
        universeIds,
        scopes: tokens.scopes,
        robloxUserId: robloxUser?.id ?? null,
      },
      at: now,
    }),
  });
  if (!connection) {
    await revokeToken(ctx.config.idpUrl, app, tokens.refreshToken);
    throw new ApiError("project_not_found", "Project not found");
  }
  if (previous && before.value) await revokeStored(ctx, previous, before.value);
  log("info", "Game connected with Roblox", {
    projectId: project.id,
    universeIds,
    scopes: tokens.scopes,
  });
  return connection;
}

/** Picks the experience the project uses among those granted; 400 `invalid_settings` otherwise. */
export async function chooseUniverse(
  ctx: BaseContext,
  input: { project: Project; developer: string; universeId: string },
): Promise<RobloxConnection> {
  const { project, developer, universeId } = input;
  const at = ctx.clock.now();
  const saved = await updateRobloxConnection(ctx.kv, project.id, (current) => {
    const connection = current.settings.robloxConnection;
    if (!connection || !connection.universeIds.includes(universeId)) return null;
    const next = {
      ...connection,
      universeId,
      gameKey: connection.universeId === universeId ? connection.gameKey : null,
    };
    return { ...current, settings: { ...current.settings, robloxConnection: next } };
  }, {
    audit: () => ({
      projectId: project.id,
      actor: developer,
      action: "roblox_universe_chosen",
      details: { universeId },
      at,
    }),
  });
  const connection = saved?.settings.robloxConnection;
  if (!connection) {
    throw new ApiError(
      "invalid_settings",
      "universeId: must be one of the experiences the connection was granted",
    );
  }
  log("info", "Connected experience chosen", { projectId: project.id, universeId });
  return connection;
}

/**
 * Ends the connection: its refresh token is revoked at Roblox first (502 `roblox_unavailable`
 * when Roblox cannot be reached, nothing changed), then the connection and tokens are forgotten.
 * A connection already lost has nothing left to revoke.
 */
export async function disconnect(
  ctx: BaseContext,
  input: { project: Project; developer: string },
): Promise<void> {
  const { project, developer } = input;
  const connection = project.settings.robloxConnection;
  if (!connection) return;
  const tokens = await getRobloxTokensEntry(ctx.kv, project.id);
  const revoked = await revokeStored(ctx, { project, connection }, tokens.value);
  if (revoked === false) {
    throw new ApiError(
      "roblox_unavailable",
      "Cannot disconnect: Roblox did not confirm revoking the grant; try again",
    );
  }
  const at = ctx.clock.now();
  await updateRobloxConnection(ctx.kv, project.id, (current) => {
    if (current.settings.robloxConnection?.grantId !== connection.grantId) return null;
    return { ...current, settings: { ...current.settings, robloxConnection: null } };
  }, {
    tokens: null,
    audit: () => ({
      projectId: project.id,
      actor: developer,
      action: "roblox_disconnected",
      details: { universeId: connection.universeId, revoked: revoked === true },
      at,
    }),
  });
  log("info", "Game disconnected from Roblox", {
    projectId: project.id,
    revoked: revoked === true,
  });
}

// Revokes a connection's stored refresh token (which ends its access tokens too): true when
// Roblox confirmed it, false when it did not answer so, null when there is nothing to revoke
// with (no tokens of this grant, or its app is no longer configured).
async function revokeStored(
  ctx: BaseContext,
  owner: { project: Project; connection: RobloxConnection },
  tokens: RobloxTokens | null,
): Promise<boolean | null> {
  if (!tokens || tokens.grantId !== owner.connection.grantId) return null;
  const app: OauthApp | null = await appOfConnection(ctx, owner.project, owner.connection);
  if (!app) return null;
  const refreshToken = await decryptSecretText(
    ctx.keys,
    tokens.refreshTokenEnc,
    tokenBinding(owner.project.id, "refresh"),
  );
  return await revokeToken(ctx.config.idpUrl, app, refreshToken);
}

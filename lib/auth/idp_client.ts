/**
 * Client side of the identity provider's OAuth 2.0 (Roblox): PKCE, code exchange, refresh,
 * userinfo, the resources a grant covers, revoke.
 */
import { z } from "zod";
import { encodeBase64Url, randomToken } from "../../core/ids.ts";
import type { OauthApp } from "./oauth_app.ts";
import type { Player } from "../../kv/sessions.ts";
import { parseUserId } from "../user_id.ts";

/** Scopes the linking page needs: the user id, then username, display name and avatar. */
const IDP_SCOPES = "openid profile";

const TIMEOUT_MS = 10_000;

/** Why a step of the provider's flow failed, as the spec's redirect error code. */
export class IdpError extends Error {
  constructor(readonly code: "oauth_token_failed" | "oauth_userinfo_failed", message: string) {
    super(message);
    this.name = "IdpError";
  }
}

/** A PKCE verifier (43 unreserved characters) and its S256 challenge. */
export async function createPkcePair(): Promise<{ verifier: string; challenge: string }> {
  const verifier = randomToken(32);
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: encodeBase64Url(new Uint8Array(digest)) };
}

/** The provider's authorization page URL for one sign-in (`scope` defaults to the player's). */
export function authorizeUrl(
  idpUrl: string,
  request: {
    clientId: string;
    redirectUri: string;
    state: string;
    codeChallenge: string;
    scope?: string;
  },
): string {
  const url = new URL(`${idpUrl}/v1/authorize`);
  url.search = new URLSearchParams({
    client_id: request.clientId,
    redirect_uri: request.redirectUri,
    scope: request.scope ?? IDP_SCOPES,
    response_type: "code",
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: "S256",
  }).toString();
  return url.href;
}

const tokenSchema = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_in: z.number().int().positive().optional(),
  scope: z.string().optional(),
});

/** The tokens one code exchange (or refresh) returned. */
export interface IdpTokens {
  accessToken: string;
  refreshToken: string | null;
  /** Seconds the access token lasts, when the provider said. */
  expiresIn: number | null;
  scopes: string[];
}

function tokensOf(parsed: z.infer<typeof tokenSchema>): IdpTokens {
  return {
    accessToken: parsed.access_token,
    refreshToken: parsed.refresh_token ?? null,
    expiresIn: parsed.expires_in ?? null,
    scopes: (parsed.scope ?? "").split(" ").filter(Boolean),
  };
}

/** Exchanges the authorization code (client_secret_post with the PKCE verifier); throws `oauth_token_failed`. */
export async function exchangeCode(
  idpUrl: string,
  app: OauthApp,
  grant: { code: string; redirectUri: string; verifier: string },
): Promise<IdpTokens> {
  const body = new URLSearchParams({
    grant_type: "authorization_code",
    code: grant.code,
    redirect_uri: grant.redirectUri,
    code_verifier: grant.verifier,
    client_id: app.clientId,
    client_secret: app.clientSecret,
  });
  const res = await send(`${idpUrl}/v1/token`, { method: "POST", body }).catch((e) => {
    throw new IdpError("oauth_token_failed", `Cannot reach the token endpoint: ${e}`);
  });
  const json = await res.json().catch(() => null);
  const parsed = tokenSchema.safeParse(json);
  if (!res.ok || !parsed.success) {
    throw new IdpError("oauth_token_failed", `Token endpoint answered ${res.status}`);
  }
  return tokensOf(parsed.data);
}

/** How a refresh ended: new tokens, the grant refused for good, or a failure worth trying again. */
export type RefreshOutcome =
  | { kind: "refreshed"; tokens: IdpTokens & { refreshToken: string } }
  | { kind: "refused"; error: string }
  | { kind: "unavailable"; reason: string };

/**
 * Spends a refresh token (single use) for a new pair; never throws. `refused` is the provider's
 * `invalid_grant` (revoked, expired, already used): the grant is over.
 */
export async function refreshTokens(
  idpUrl: string,
  app: OauthApp,
  refreshToken: string,
): Promise<RefreshOutcome> {
  const body = new URLSearchParams({
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: app.clientId,
    client_secret: app.clientSecret,
  });
  let res: Response;
  try {
    res = await send(`${idpUrl}/v1/token`, { method: "POST", body });
  } catch (e) {
    return { kind: "unavailable", reason: `Cannot reach the token endpoint: ${e}` };
  }
  const json = await res.json().catch(() => null);
  const parsed = tokenSchema.safeParse(json);
  if (res.ok && parsed.success && parsed.data.refresh_token) {
    const tokens = tokensOf(parsed.data);
    return { kind: "refreshed", tokens: { ...tokens, refreshToken: parsed.data.refresh_token } };
  }
  const error = typeof json?.error === "string" ? json.error : `HTTP ${res.status}`;
  if (res.status === 400 && (error === "invalid_grant" || error === "invalid_client")) {
    return { kind: "refused", error };
  }
  return { kind: "unavailable", reason: `Token endpoint answered ${res.status} (${error})` };
}

const resourcesSchema = z.object({
  resource_infos: z.array(z.object({
    resources: z.object({
      universe: z.object({ ids: z.array(z.string().regex(/^\d{1,20}$/)) }).optional(),
    }),
  })),
});

/** The experiences (universe ids) a grant covers, as the user picked them; throws `oauth_token_failed`. */
export async function fetchGrantedUniverses(
  idpUrl: string,
  app: OauthApp,
  accessToken: string,
): Promise<string[]> {
  const body = new URLSearchParams({
    token: accessToken,
    client_id: app.clientId,
    client_secret: app.clientSecret,
  });
  const res = await send(`${idpUrl}/v1/token/resources`, { method: "POST", body }).catch((e) => {
    throw new IdpError("oauth_token_failed", `Cannot reach the resources endpoint: ${e}`);
  });
  const parsed = resourcesSchema.safeParse(await res.json().catch(() => null));
  if (!res.ok || !parsed.success) {
    throw new IdpError("oauth_token_failed", `Resources endpoint answered ${res.status}`);
  }
  const ids = parsed.data.resource_infos.flatMap((info) => info.resources.universe?.ids ?? []);
  return [...new Set(ids)];
}

const userinfoSchema = z.object({
  sub: z.string(),
  preferred_username: z.string().min(1),
  nickname: z.string().nullish(),
  name: z.string().nullish(),
  picture: z.string().nullish(),
});

/** Reads the signed-in user's profile as the spec's Player; throws `oauth_userinfo_failed`. */
export async function fetchPlayer(idpUrl: string, accessToken: string): Promise<Player> {
  const res = await send(`${idpUrl}/v1/userinfo`, {
    headers: { authorization: `Bearer ${accessToken}` },
  }).catch((e) => {
    throw new IdpError("oauth_userinfo_failed", `Cannot reach the userinfo endpoint: ${e}`);
  });
  const json = await res.json().catch(() => null);
  const parsed = userinfoSchema.safeParse(json);
  const id = parsed.success ? parseUserId(parsed.data.sub) : null;
  if (!res.ok || !parsed.success || id === null) {
    throw new IdpError("oauth_userinfo_failed", `Userinfo endpoint answered ${res.status}`);
  }
  const claims = parsed.data;
  return {
    id,
    name: claims.preferred_username,
    displayName: claims.nickname || claims.name || claims.preferred_username,
    avatar: claims.picture && /^https?:\/\//.test(claims.picture) ? claims.picture : null,
  };
}

/** Revokes a token we no longer need; returns false instead of throwing, since sign-in already succeeded. */
export async function revokeToken(idpUrl: string, app: OauthApp, token: string): Promise<boolean> {
  const body = new URLSearchParams({
    token,
    client_id: app.clientId,
    client_secret: app.clientSecret,
  });
  try {
    const res = await send(`${idpUrl}/v1/token/revoke`, { method: "POST", body });
    await res.body?.cancel();
    return res.ok;
  } catch {
    return false;
  }
}

// A clearable timer instead of AbortSignal.timeout, so nothing outlives the request.
async function send(url: string, init: RequestInit): Promise<Response> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), TIMEOUT_MS);
  try {
    const res = await fetch(url, { ...init, signal: controller.signal, redirect: "manual" });
    // Read the body inside the timeout too; keep a null body where the status forbids one.
    const body = await res.arrayBuffer();
    const empty = [101, 103, 204, 205, 304].includes(res.status);
    return new Response(empty ? null : body, { status: res.status, headers: res.headers });
  } finally {
    clearTimeout(timer);
  }
}

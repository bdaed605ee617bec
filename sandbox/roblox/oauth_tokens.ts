// The token side of the Roblox OAuth 2.0 stand-in, relative to IDP_URL: v1/token (authorization
// code and refresh token grants), v1/token/resources, v1/token/introspect and v1/token/revoke.
// Codes live one minute and work once; a refresh token works once and rotates, and presenting a
// spent one revokes the whole grant, as Roblox does.
import type { Context, Hono } from "hono";
import { base64urlnopad } from "@scure/base";
import type { IdTokenSigner } from "./oauth_jwt.ts";
import { authenticateClient, type OauthClient, userClaims, verifyPkce } from "./oauth_protocol.ts";
import { activeAccessGrant, type Grant, type OauthState } from "./oauth_state.ts";

const ACCESS_TTL_MS = 900_000;
const REFRESH_TTL_MS = 90 * 24 * 3_600_000;
const ID_TOKEN_TTL_S = 3600;

/** A fresh opaque token. */
export function randomToken(): string {
  return base64urlnopad.encode(crypto.getRandomValues(new Uint8Array(32)));
}

/** An OAuth error answer, never cached. */
export function oauthError(
  c: Context,
  status: 400 | 401 | 500,
  error: string,
  description: string,
) {
  c.header("cache-control", "no-store");
  return c.json({ error, error_description: description }, status);
}

/** The form body, or null when the request is not form-encoded. */
export async function readForm(c: Context): Promise<URLSearchParams | null> {
  if (!c.req.header("content-type")?.startsWith("application/x-www-form-urlencoded")) return null;
  return new URLSearchParams(await c.req.text());
}

/** Adds the token endpoints to the IdP app. */
export function addTokenRoutes(
  idp: Hono,
  state: OauthState,
  signer: IdTokenSigner,
  issuer: () => string,
): void {
  const findClient = (id: string) => state.clients.get(id);

  // Authenticates the client of a form post; the answer is an error Response or the client.
  async function clientForm(c: Context): Promise<Response | [OauthClient, URLSearchParams]> {
    const form = await readForm(c);
    if (!form) return oauthError(c, 400, "invalid_request", "Body must be form-encoded");
    const auth = authenticateClient(c.req.header("authorization"), form, findClient);
    if (!auth.ok) {
      if (auth.basic && auth.status === 401) c.header("www-authenticate", 'Basic realm="oauth"');
      return oauthError(c, auth.status, auth.error, auth.description);
    }
    return [auth.client, form];
  }

  async function issue(c: Context, grant: Grant, nonce?: string) {
    const issuedAt = state.now();
    const accessToken = randomToken();
    grant.refreshToken = randomToken();
    state.tokens
      .set(accessToken, {
        grant,
        kind: "access_token",
        issuedAt,
        expiresAt: issuedAt + ACCESS_TTL_MS,
      })
      .set(grant.refreshToken, {
        grant,
        kind: "refresh_token",
        issuedAt,
        expiresAt: issuedAt + REFRESH_TTL_MS,
      });
    const iat = Math.floor(issuedAt / 1000);
    const idToken = await signer.sign({
      ...userClaims(state.users.get(grant.userId)!, grant.scopes),
      iss: issuer(),
      aud: grant.clientId,
      iat,
      exp: iat + ID_TOKEN_TTL_S,
      ...(nonce ? { nonce } : {}),
    });
    c.header("cache-control", "no-store");
    return c.json({
      access_token: accessToken,
      refresh_token: grant.refreshToken,
      id_token: idToken,
      token_type: "Bearer",
      expires_in: 899,
      scope: grant.scopes.join(" "),
    });
  }

  async function codeGrant(c: Context, client: OauthClient, form: URLSearchParams) {
    const code = state.codes.get(form.get("code") ?? "");
    if (!code || code.clientId !== client.clientId) {
      return oauthError(c, 400, "invalid_grant", "Invalid authorization code");
    }
    if (code.used) {
      // RFC 6749 4.1.2: a replayed code revokes what it already granted.
      if (code.grant) code.grant.revoked = true;
      return oauthError(c, 400, "invalid_grant", "Authorization code already used");
    }
    // Any exchange attempt spends the code, so a failed one cannot be retried with other values.
    code.used = true;
    if (state.now() >= code.expiresAt) {
      return oauthError(c, 400, "invalid_grant", "Authorization code expired");
    }
    if (form.get("redirect_uri") !== code.redirectUri) {
      return oauthError(
        c,
        400,
        "invalid_grant",
        "redirect_uri does not match the authorize request",
      );
    }
    if (!(await verifyPkce(form.get("code_verifier") ?? "", code.codeChallenge))) {
      return oauthError(c, 400, "invalid_grant", "PKCE verification failed");
    }
    code.grant = {
      id: randomToken(),
      clientId: code.clientId,
      userId: code.userId,
      scopes: code.scopes,
      universeIds: code.universeIds,
      refreshToken: "",
      revoked: false,
    };
    return await issue(c, code.grant, code.nonce);
  }

  function refreshGrant(c: Context, client: OauthClient, form: URLSearchParams) {
    const token = form.get("refresh_token") ?? "";
    const issued = state.tokens.get(token);
    if (!issued || issued.kind !== "refresh_token" || issued.grant.clientId !== client.clientId) {
      return oauthError(c, 400, "invalid_grant", "Invalid refresh token");
    }
    const { grant } = issued;
    if (grant.revoked) return oauthError(c, 400, "invalid_grant", "The grant was revoked");
    if (token !== grant.refreshToken) {
      // A spent refresh token presented again: someone holds a copy, so the grant ends.
      grant.revoked = true;
      return oauthError(c, 400, "invalid_grant", "Refresh token already used");
    }
    if (state.now() >= issued.expiresAt) {
      return oauthError(c, 400, "invalid_grant", "Refresh token expired");
    }
    state.refreshes.push({ grantId: grant.id, clientId: client.clientId, at: state.now() });
    return issue(c, grant);
  }

  idp.post("/v1/token", async (c) => {
    const hold = state.tokenHolds.shift();
    if (hold) {
      hold.arrived();
      await hold.released;
    }
    const failure = state.tokenFailures.take();
    if (failure) return oauthError(c, failure.status, failure.error, "Forced failure");
    const checked = await clientForm(c);
    if (checked instanceof Response) return checked;
    const [client, form] = checked;
    const grantType = form.get("grant_type");
    if (grantType === "authorization_code") return await codeGrant(c, client, form);
    if (grantType === "refresh_token") return await refreshGrant(c, client, form);
    return oauthError(
      c,
      400,
      "unsupported_grant_type",
      "grant_type must be authorization_code or refresh_token",
    );
  });

  // The experiences a token's grant covers, as the user picked them on the consent page.
  idp.post("/v1/token/resources", async (c) => {
    const checked = await clientForm(c);
    if (checked instanceof Response) return checked;
    const [client, form] = checked;
    const grant = activeAccessGrant(state, form.get("token") ?? undefined);
    if (!grant || grant.clientId !== client.clientId) {
      return oauthError(c, 401, "invalid_token", "The token is invalid or expired");
    }
    const owner = { id: String(grant.userId), type: "User" };
    const universes = grant.universeIds.length > 0
      ? { universe: { ids: [...grant.universeIds] } }
      : {};
    return c.json({ resource_infos: [{ owner, resources: universes }] });
  });

  idp.post("/v1/token/introspect", async (c) => {
    const checked = await clientForm(c);
    if (checked instanceof Response) return checked;
    const [client, form] = checked;
    const token = form.get("token") ?? "";
    const issued = state.tokens.get(token);
    const grant = issued?.grant;
    const active = issued !== undefined && grant?.clientId === client.clientId &&
      !grant.revoked && state.now() < issued.expiresAt &&
      (issued.kind === "access_token" || token === grant.refreshToken);
    if (!active) return c.json({ active: false });
    return c.json({
      active: true,
      token_type: issued.kind,
      client_id: grant.clientId,
      sub: String(grant.userId),
      scope: grant.scopes.join(" "),
      iat: Math.floor(issued.issuedAt / 1000),
      exp: Math.floor(issued.expiresAt / 1000),
      iss: issuer(),
    });
  });

  idp.post("/v1/token/revoke", async (c) => {
    const checked = await clientForm(c);
    if (checked instanceof Response) return checked;
    const [client, form] = checked;
    const token = form.get("token");
    if (!token) return oauthError(c, 400, "invalid_request", "token is required");
    const found = state.tokens.get(token);
    const issued = found?.grant.clientId === client.clientId ? found : undefined;
    if (issued) issued.grant.revoked = true;
    state.revocations.push({
      token,
      kind: issued?.kind ?? "unknown",
      clientId: client.clientId,
      userId: issued?.grant.userId ?? null,
      at: state.now(),
    });
    // RFC 7009: unknown tokens are answered 200 too, so callers learn nothing from it.
    return c.body(null, 200);
  });
}

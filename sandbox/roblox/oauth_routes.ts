// The Roblox OAuth 2.0 endpoints, relative to IDP_URL: authorize (+ its consent form), token,
// userinfo, revoke, discovery and keys.
import { Hono } from "hono";
import type { Context } from "hono";
import { base64urlnopad } from "@scure/base";
import type { IdTokenSigner } from "./oauth_jwt.ts";
import { renderConsentPage, renderErrorPage } from "./oauth_pages.ts";
import {
  authenticateClient,
  type AuthorizeRequest,
  checkAuthorize,
  type OauthUser,
  redirectWith,
  SUPPORTED_SCOPES,
  userClaims,
  verifyPkce,
} from "./oauth_protocol.ts";
import type { Grant, OauthState } from "./oauth_state.ts";

const CODE_TTL_MS = 60_000;
const ACCESS_TTL_MS = 900_000;
const ID_TOKEN_TTL_S = 3600;

function randomToken() {
  return base64urlnopad.encode(crypto.getRandomValues(new Uint8Array(32)));
}

function oauthError(c: Context, status: 400 | 401 | 500, error: string, description: string) {
  c.header("cache-control", "no-store");
  return c.json({ error, error_description: description }, status);
}

async function readForm(c: Context) {
  if (!c.req.header("content-type")?.startsWith("application/x-www-form-urlencoded")) return null;
  return new URLSearchParams(await c.req.text());
}

function denyLocation(request: AuthorizeRequest) {
  return redirectWith(request.redirectUri, {
    error: "access_denied",
    error_description: "The user denied the authorization request",
    state: request.state,
  });
}

/** Builds the IdP app; mount it at /oauth. `origin` is read per request (known after listen). */
export function createIdpApp(state: OauthState, signer: IdTokenSigner, origin: () => string) {
  const idp = new Hono();
  const findClient = (id: string) => state.clients.get(id);
  const issuer = () => `${origin()}/oauth/`;

  idp.get("/.well-known/openid-configuration", (c) => {
    const base = `${origin()}/oauth`;
    return c.json({
      issuer: issuer(),
      authorization_endpoint: `${base}/v1/authorize`,
      token_endpoint: `${base}/v1/token`,
      userinfo_endpoint: `${base}/v1/userinfo`,
      revocation_endpoint: `${base}/v1/token/revoke`,
      jwks_uri: `${base}/v1/certs`,
      scopes_supported: SUPPORTED_SCOPES,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["ES256"],
      token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic"],
      code_challenge_methods_supported: ["S256"],
      claims_supported: [
        "sub",
        "name",
        "nickname",
        "preferred_username",
        "created_at",
        "profile",
        "picture",
      ],
    });
  });
  idp.get("/v1/certs", (c) => c.json(signer.jwks()));

  idp.get("/v1/authorize", (c) => {
    const params = c.req.query();
    const check = checkAuthorize(params, findClient);
    if (check.kind === "page_error") return c.html(renderErrorPage(check.message), 400);
    if (check.kind === "redirect_error") return c.redirect(check.location, 302);
    const { request } = check;
    if (state.denials.take()) return c.redirect(denyLocation(request), 302);
    const name = state.clients.get(request.clientId)?.name ?? request.clientId;
    return c.html(renderConsentPage(name, params, request.scopes, [...state.users.values()]));
  });

  // The consent form posts every authorize parameter back, so they are checked again here.
  idp.post("/v1/authorize/decision", async (c) => {
    const form = (await readForm(c)) ?? new URLSearchParams();
    const check = checkAuthorize(Object.fromEntries(form), findClient);
    if (check.kind === "page_error") return c.html(renderErrorPage(check.message), 400);
    if (check.kind === "redirect_error") return c.redirect(check.location, 302);
    const { request } = check;
    if (form.get("decision") !== "allow") return c.redirect(denyLocation(request), 302);
    const user = pickUser(form);
    if (typeof user === "string") return c.html(renderErrorPage(user), 400);
    const code = randomToken();
    const expiresAt = state.now() + CODE_TTL_MS;
    state.codes.set(code, { ...request, userId: user.id, expiresAt, used: false });
    return c.redirect(redirectWith(request.redirectUri, { code, state: request.state }), 302);
  });

  function pickUser(form: URLSearchParams): OauthUser | string {
    const customId = form.get("custom_id")?.trim();
    if (!customId) return state.users.get(Number(form.get("user_id"))) ?? "Pick a player";
    const id = Number(customId);
    if (!/^\d+$/.test(customId) || !Number.isSafeInteger(id) || id < 1) {
      return "User ID must be a positive integer";
    }
    const known = state.users.get(id);
    if (known) return known;
    const username = form.get("custom_username")?.trim() ?? "";
    if (!/^[A-Za-z0-9_]{3,20}$/.test(username)) {
      return "Username must be 3 to 20 letters, digits or underscores";
    }
    const user = { id, username, displayName: username, picture: null };
    state.users.set(id, user);
    return user;
  }

  idp.post("/v1/token", async (c) => {
    const failure = state.tokenFailures.take();
    if (failure) return oauthError(c, failure.status, failure.error, "Forced failure");
    const form = await readForm(c);
    if (!form) return oauthError(c, 400, "invalid_request", "Body must be form-encoded");
    const auth = authenticateClient(c.req.header("authorization"), form, findClient);
    if (!auth.ok) {
      if (auth.basic && auth.status === 401) c.header("www-authenticate", 'Basic realm="oauth"');
      return oauthError(c, auth.status, auth.error, auth.description);
    }
    if (form.get("grant_type") !== "authorization_code") {
      return oauthError(c, 400, "unsupported_grant_type", "grant_type must be authorization_code");
    }
    const code = state.codes.get(form.get("code") ?? "");
    if (!code || code.clientId !== auth.client.clientId) {
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
    const issuedAt = state.now();
    const grant: Grant = {
      clientId: code.clientId,
      userId: code.userId,
      scopes: code.scopes,
      accessToken: randomToken(),
      refreshToken: randomToken(),
      accessExpiresAt: issuedAt + ACCESS_TTL_MS,
      revoked: false,
    };
    code.grant = grant;
    state.tokens.set(grant.accessToken, grant).set(grant.refreshToken, grant);
    const iat = Math.floor(issuedAt / 1000);
    const idToken = await signer.sign({
      ...userClaims(state.users.get(code.userId)!, code.scopes),
      iss: issuer(),
      aud: code.clientId,
      iat,
      exp: iat + ID_TOKEN_TTL_S,
      ...(code.nonce ? { nonce: code.nonce } : {}),
    });
    c.header("cache-control", "no-store");
    return c.json({
      access_token: grant.accessToken,
      refresh_token: grant.refreshToken,
      id_token: idToken,
      token_type: "Bearer",
      expires_in: 899,
      scope: code.scopes.join(" "),
    });
  });

  idp.get("/v1/userinfo", (c) => {
    const failure = state.userinfoFailures.take();
    if (failure?.status === 500) return oauthError(c, 500, "server_error", "Forced failure");
    const token = /^Bearer (\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    const grant = token ? state.tokens.get(token) : undefined;
    if (
      failure || !grant || grant.revoked || token !== grant.accessToken ||
      state.now() >= grant.accessExpiresAt
    ) {
      c.header("www-authenticate", 'Bearer error="invalid_token"');
      return oauthError(c, 401, "invalid_token", "The access token is invalid or expired");
    }
    return c.json(userClaims(state.users.get(grant.userId)!, grant.scopes));
  });

  idp.post("/v1/token/revoke", async (c) => {
    const form = await readForm(c);
    if (!form) return oauthError(c, 400, "invalid_request", "Body must be form-encoded");
    const auth = authenticateClient(c.req.header("authorization"), form, findClient);
    if (!auth.ok) return oauthError(c, auth.status, auth.error, auth.description);
    const token = form.get("token");
    if (!token) return oauthError(c, 400, "invalid_request", "token is required");
    const found = state.tokens.get(token);
    const grant = found?.clientId === auth.client.clientId ? found : undefined;
    if (grant) grant.revoked = true;
    state.revocations.push({
      token,
      kind: !grant ? "unknown" : token === grant.refreshToken ? "refresh_token" : "access_token",
      clientId: auth.client.clientId,
      userId: grant?.userId ?? null,
      at: state.now(),
    });
    // RFC 7009: unknown tokens are answered 200 too, so callers learn nothing from it.
    return c.body(null, 200);
  });

  return idp;
}

// The Roblox OAuth 2.0 endpoints, relative to IDP_URL: authorize (+ its consent form), userinfo,
// discovery and keys; the token endpoints are in `oauth_tokens.ts`.
import { Hono } from "hono";
import type { IdTokenSigner } from "./oauth_jwt.ts";
import { renderConsentPage, renderErrorPage } from "./oauth_pages.ts";
import {
  type AuthorizeRequest,
  checkAuthorize,
  needsUniverses,
  type OauthUser,
  redirectWith,
  SUPPORTED_SCOPES,
  userClaims,
} from "./oauth_protocol.ts";
import { activeAccessGrant, type OauthState } from "./oauth_state.ts";
import { addTokenRoutes, oauthError, randomToken, readForm } from "./oauth_tokens.ts";

const CODE_TTL_MS = 60_000;

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
      introspection_endpoint: `${base}/v1/token/introspect`,
      resources_endpoint: `${base}/v1/token/resources`,
      jwks_uri: `${base}/v1/certs`,
      scopes_supported: SUPPORTED_SCOPES,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
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
    return c.html(
      renderConsentPage(name, params, request.scopes, {
        users: [...state.users.values()],
        universes: needsUniverses(request.scopes) ? [...state.universes.values()] : [],
      }),
    );
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
    const universeIds = needsUniverses(request.scopes) ? pickUniverses(form) : [];
    if (typeof universeIds === "string") return c.html(renderErrorPage(universeIds), 400);
    const code = randomToken();
    const expiresAt = state.now() + CODE_TTL_MS;
    state.codes.set(code, { ...request, userId: user.id, universeIds, expiresAt, used: false });
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

  // The experiences ticked on the consent page, plus one typed by id (added to the list).
  function pickUniverses(form: URLSearchParams): string[] | string {
    const picked = new Set(form.getAll("universe_id").filter((id) => state.universes.has(id)));
    const customId = form.get("custom_universe_id")?.trim();
    if (customId) {
      if (!/^\d{1,20}$/.test(customId)) return "Universe ID must be digits";
      if (!state.universes.has(customId)) {
        state.universes.set(customId, { id: customId, name: `Experience ${customId}` });
      }
      picked.add(customId);
    }
    return picked.size > 0 ? [...picked] : "Pick at least one experience";
  }

  idp.get("/v1/userinfo", (c) => {
    const failure = state.userinfoFailures.take();
    if (failure?.status === 500) return oauthError(c, 500, "server_error", "Forced failure");
    const token = /^Bearer (\S+)$/i.exec(c.req.header("authorization") ?? "")?.[1];
    const grant = activeAccessGrant(state, token);
    if (failure || !grant) {
      c.header("www-authenticate", 'Bearer error="invalid_token"');
      return oauthError(c, 401, "invalid_token", "The access token is invalid or expired");
    }
    return c.json(userClaims(state.users.get(grant.userId)!, grant.scopes));
  });

  addTokenRoutes(idp, state, signer, issuer);
  return idp;
}

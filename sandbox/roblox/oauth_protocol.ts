// Pure OAuth 2.0 rules shared by the stand-in's routes: authorize checks, client auth, PKCE.
import { base64urlnopad } from "@scure/base";
import { z } from "zod";

export interface OauthClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  /** Shown on the consent page; defaults to the client id. */
  name?: string | undefined;
}

export interface OauthUser {
  id: number;
  username: string;
  displayName: string;
  /** Avatar URL; null when the player has none. */
  picture?: string | null | undefined;
  /** Account creation time in Unix seconds (default 1600000000). */
  createdAt?: number | undefined;
}

/** A checked authorization request. */
export interface AuthorizeRequest {
  clientId: string;
  redirectUri: string;
  scopes: string[];
  state?: string | undefined;
  codeChallenge: string;
  nonce?: string | undefined;
}

export type AuthorizeCheck =
  | { kind: "ok"; request: AuthorizeRequest }
  | { kind: "page_error"; message: string }
  | { kind: "redirect_error"; location: string };

/** Open Cloud scopes that act on the experiences the user picks on the consent page. */
export const UNIVERSE_SCOPES = [
  "universe-messaging-service:publish",
  "universe.secret:read",
  "universe.secret:write",
  "universe:write",
];

export const SUPPORTED_SCOPES = ["openid", "profile", ...UNIVERSE_SCOPES];

/** True when the scopes ask for experiences, so the consent page has the user pick some. */
export function needsUniverses(scopes: string[]): boolean {
  return scopes.some((scope) => UNIVERSE_SCOPES.includes(scope));
}

const authorizeParams = z.object({
  client_id: z.string().optional(),
  redirect_uri: z.string().optional(),
  response_type: z.string().optional(),
  scope: z.string().optional(),
  state: z.string().optional(),
  code_challenge: z.string().optional(),
  code_challenge_method: z.string().optional(),
  nonce: z.string().optional(),
});

/** Adds query parameters to a redirect URI, keeping the ones it already has. */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>) {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined) url.searchParams.set(name, value);
  }
  return url.href;
}

/**
 * Applies the authorize endpoint's rules: a bad client or redirect URI is shown on a page
 * (never redirected to), every later problem is redirected to the client as error=...
 */
export function checkAuthorize(
  input: Record<string, string>,
  findClient: (clientId: string) => OauthClient | undefined,
): AuthorizeCheck {
  const params = authorizeParams.parse(input);
  const client = params.client_id ? findClient(params.client_id) : undefined;
  if (!client) return { kind: "page_error", message: "Unknown client_id" };
  if (!params.redirect_uri || !client.redirectUris.includes(params.redirect_uri)) {
    return { kind: "page_error", message: "redirect_uri is not registered for this client" };
  }
  const fail = (error: string, description: string) => ({
    kind: "redirect_error" as const,
    location: redirectWith(params.redirect_uri!, {
      error,
      error_description: description,
      state: params.state,
    }),
  });
  if (params.response_type !== "code") {
    return fail("unsupported_response_type", "response_type must be code");
  }
  const scopes = (params.scope ?? "").split(" ").filter(Boolean);
  if (!scopes.includes("openid")) return fail("invalid_scope", "scope must include openid");
  const unknown = scopes.find((scope) => !SUPPORTED_SCOPES.includes(scope));
  if (unknown) return fail("invalid_scope", `Unsupported scope ${unknown}`);
  if (!params.code_challenge || !/^[A-Za-z0-9_-]{43}$/.test(params.code_challenge)) {
    return fail("invalid_request", "code_challenge must be a base64url SHA-256 digest");
  }
  if (params.code_challenge_method !== "S256") {
    return fail("invalid_request", "code_challenge_method must be S256");
  }
  return {
    kind: "ok",
    request: {
      clientId: client.clientId,
      redirectUri: params.redirect_uri,
      scopes: [...new Set(scopes)],
      state: params.state,
      codeChallenge: params.code_challenge,
      nonce: params.nonce,
    },
  };
}

/** True when the verifier is well formed and hashes to the challenge (RFC 7636 S256). */
export async function verifyPkce(verifier: string, challenge: string) {
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64urlnopad.encode(new Uint8Array(digest)) === challenge;
}

export type ClientAuth =
  | { ok: true; client: OauthClient }
  | { ok: false; status: 400 | 401; error: string; description: string; basic: boolean };

function decodeFormComponent(value: string) {
  return decodeURIComponent(value.replaceAll("+", " "));
}

/** Authenticates the client by HTTP Basic (client_secret_basic) or form fields (client_secret_post). */
export function authenticateClient(
  authorization: string | undefined,
  form: URLSearchParams,
  findClient: (clientId: string) => OauthClient | undefined,
): ClientAuth {
  let clientId = form.get("client_id") ?? undefined;
  let secret = form.get("client_secret") ?? undefined;
  const basic = authorization?.toLowerCase().startsWith("basic ") ?? false;
  const refuse = (description: string) =>
    ({ ok: false, status: 401, error: "invalid_client", description, basic }) as const;
  if (basic) {
    if (secret !== undefined) {
      return {
        ok: false,
        status: 400,
        error: "invalid_request",
        description: "Use one client authentication method",
        basic,
      };
    }
    try {
      const decoded = new TextDecoder().decode(base64ToBytes(authorization!.slice(6).trim()));
      const colon = decoded.indexOf(":");
      if (colon < 0) return refuse("Malformed Basic credentials");
      const basicId = decodeFormComponent(decoded.slice(0, colon));
      if (clientId !== undefined && clientId !== basicId) return refuse("client_id mismatch");
      clientId = basicId;
      secret = decodeFormComponent(decoded.slice(colon + 1));
    } catch {
      return refuse("Malformed Basic credentials");
    }
  }
  const client = clientId ? findClient(clientId) : undefined;
  if (!client) return refuse("Unknown client");
  if (secret !== client.clientSecret) return refuse("Client authentication failed");
  return { ok: true, client };
}

function base64ToBytes(value: string) {
  return Uint8Array.from(atob(value), (char) => char.charCodeAt(0));
}

/** Userinfo and ID token claims for the granted scopes, shaped like Roblox's. */
export function userClaims(user: OauthUser, scopes: string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = { sub: String(user.id) };
  if (!scopes.includes("profile")) return claims;
  return {
    ...claims,
    name: user.displayName,
    nickname: user.displayName,
    preferred_username: user.username,
    created_at: user.createdAt ?? 1_600_000_000,
    profile: `https://www.roblox.com/users/${user.id}/profile`,
    picture: user.picture ?? null,
  };
}

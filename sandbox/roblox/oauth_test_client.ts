// A minimal relying party for the OAuth stand-in, so tests can walk the real protocol over HTTP
// without repeating form and PKCE plumbing. Every request can be bent with overrides.
import { base64urlnopad } from "@scure/base";
import type { OauthClient, OauthStandIn } from "./oauth.ts";

/** A PKCE verifier and its S256 challenge. */
export async function createPkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64urlnopad.encode(crypto.getRandomValues(new Uint8Array(48)));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: base64urlnopad.encode(new Uint8Array(digest)) };
}

/** POSTs form-encoded fields. */
export function postForm(url: string, fields: Record<string, string>, headers: HeadersInit = {}) {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields),
  });
}

/** The token answer of a successful exchange. */
export interface TokenSet {
  access_token: string;
  refresh_token: string;
  id_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

/** A relying party registered as `client`, using its first redirect URI and state "state-123". */
export function createOauthTestClient(standIn: OauthStandIn, client: OauthClient) {
  const redirectUri = firstRedirectUri(client);
  const idpUrl = standIn.idpUrl;

  function authorizeUrl(challenge: string, overrides: Record<string, string> = {}) {
    const url = new URL(`${idpUrl}/v1/authorize`);
    const params = {
      client_id: client.clientId,
      redirect_uri: redirectUri,
      scope: "openid profile",
      response_type: "code",
      state: "state-123",
      code_challenge: challenge,
      code_challenge_method: "S256",
      ...overrides,
    };
    for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
    return url.href;
  }

  function exchange(code: string, verifier: string, overrides: Record<string, string> = {}) {
    return postForm(`${idpUrl}/v1/token`, {
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      ...overrides,
    });
  }

  /** Authorizes `userId` through the consent form and returns the code with its verifier. */
  async function getCode(userId: number, overrides: Record<string, string> = {}) {
    const pkce = await createPkce();
    const location = await standIn.authorizeAutomatically(
      authorizeUrl(pkce.challenge, overrides),
      userId,
    );
    const code = new URL(location).searchParams.get("code");
    if (!code) throw new Error(`Cannot get a code: redirected to ${location}`);
    return { code, verifier: pkce.verifier };
  }

  /** Authorizes and exchanges the code; throws unless the exchange succeeds. */
  async function signIn(userId: number, overrides: Record<string, string> = {}): Promise<TokenSet> {
    const { code, verifier } = await getCode(userId, overrides);
    const res = await exchange(code, verifier);
    if (res.status !== 200) throw new Error(`Cannot sign in: ${res.status} ${await res.text()}`);
    return await res.json();
  }

  function userinfo(accessToken: string) {
    return fetch(`${idpUrl}/v1/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  }

  function revoke(token: string, overrides: Record<string, string> = {}) {
    return postForm(`${idpUrl}/v1/token/revoke`, {
      token,
      client_id: client.clientId,
      client_secret: client.clientSecret,
      ...overrides,
    });
  }

  return { redirectUri, authorizeUrl, exchange, getCode, signIn, userinfo, revoke };
}

/** The redirect URI the test client uses; the control API registers at least one. */
function firstRedirectUri(client: OauthClient): string {
  const [uri] = client.redirectUris;
  if (!uri) throw new Error("Cannot make an OAuth test client: the client has no redirect URI");
  return uri;
}

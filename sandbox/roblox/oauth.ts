// Stand-in for Roblox OAuth 2.0, rooted at `${url}/oauth` (set IDP_URL to `idpUrl`), with test
// controls in process and under /_control. ID tokens are real ES256 JWTs; keys at v1/certs.
import { Hono } from "hono";
import { type ListenOptions, serveApp } from "./_serve.ts";
import { createOauthControlApp } from "./oauth_control.ts";
import { createIdTokenSigner } from "./oauth_jwt.ts";
import type { OauthClient, OauthUser } from "./oauth_protocol.ts";
import { createIdpApp } from "./oauth_routes.ts";
import { createOauthState, type Revocation, seededUsers } from "./oauth_state.ts";

export type { OauthClient, OauthUser } from "./oauth_protocol.ts";
export type { Revocation } from "./oauth_state.ts";

export interface TokenFailure {
  count?: number | undefined;
  status?: 400 | 401 | 500 | undefined;
  error?: string | undefined;
}

export interface UserinfoFailure {
  count?: number | undefined;
  status?: 401 | 500 | undefined;
}

export interface OauthStandInOptions extends ListenOptions {
  /** Clock in Unix ms: code (1 minute) and access token (15 minutes) lifetimes use it. */
  now?: () => number;
  clients?: OauthClient[];
  /** Seed the three test players 1001, 1002 and 1003 (default true). */
  seedUsers?: boolean;
}

export interface OauthStandIn {
  /** Origin of the stand-in; control routes live here. */
  url: string;
  /** `${url}/oauth`: the value for IDP_URL. */
  idpUrl: string;
  registerClient(client: OauthClient): void;
  addUser(user: OauthUser): void;
  users(): OauthUser[];
  /** The next `count` (default 1) authorize requests redirect back with error=access_denied. */
  denyNextAuthorize(count?: number): void;
  /** The next token requests fail (default one, 400 invalid_grant) without spending the code. */
  failNextToken(failure?: TokenFailure): void;
  /** The next userinfo requests fail (default one, 401 invalid_token). */
  failNextUserinfo(failure?: UserinfoFailure): void;
  clearFailures(): void;
  revoked(): Revocation[];
  /** Plays the consent page's "Allow" for `userId` over HTTP; returns the redirect Location. */
  authorizeAutomatically(authorizeUrl: string, userId: number): Promise<string>;
  close(): Promise<void>;
}

/** Starts the OAuth stand-in on loopback. */
export async function startOauthStandIn(options: OauthStandInOptions = {}): Promise<OauthStandIn> {
  const state = createOauthState(options.now ?? Date.now);
  const signer = await createIdTokenSigner();
  let origin = "";

  const controls = {
    registerClient(client: OauthClient) {
      state.clients.set(client.clientId, { ...client, redirectUris: [...client.redirectUris] });
    },
    addUser(user: OauthUser) {
      state.users.set(user.id, { ...user });
    },
    users: () => [...state.users.values()].map((user) => ({ ...user })),
    denyNextAuthorize: (count = 1) => state.denials.add(true, count),
    failNextToken(failure: TokenFailure = {}) {
      const plan = { status: failure.status ?? 400, error: failure.error ?? "invalid_grant" };
      state.tokenFailures.add(plan, failure.count);
    },
    failNextUserinfo(failure: UserinfoFailure = {}) {
      state.userinfoFailures.add({ status: failure.status ?? 401 }, failure.count);
    },
    clearFailures() {
      state.denials.clear();
      state.tokenFailures.clear();
      state.userinfoFailures.clear();
    },
    revoked: () => state.revocations.map((revocation) => ({ ...revocation })),
    authorizeAutomatically,
  };
  options.clients?.forEach(controls.registerClient);

  const app = new Hono();
  app.route("/oauth", createIdpApp(state, signer, () => origin));
  app.route("/", createOauthControlApp(controls));
  const server = await serveApp(app, options);
  origin = server.url;
  if (options.seedUsers ?? true) seededUsers(origin).forEach(controls.addUser);

  return { url: origin, idpUrl: `${origin}/oauth`, ...controls, close: server.close };
}

/**
 * Opens the authorize URL and, when the consent page shows, submits its form with "Allow" for
 * `userId`, as a browser would. Returns the Location the IdP redirects to (code and state, or an
 * error when the request is refused or the deny switch is armed).
 */
async function authorizeAutomatically(authorizeUrl: string, userId: number): Promise<string> {
  const page = await fetch(authorizeUrl, { redirect: "manual" });
  const body = await page.text();
  if (page.status === 302) return page.headers.get("location")!;
  if (page.status !== 200) throw new Error(`Cannot authorize: ${page.status} ${body}`);
  const url = new URL(authorizeUrl);
  const form = new URLSearchParams(url.searchParams);
  form.set("decision", "allow");
  form.set("user_id", String(userId));
  const decision = await fetch(new URL(`${url.pathname}/decision`, url), {
    method: "POST",
    body: form,
    redirect: "manual",
  });
  const answer = await decision.text();
  if (decision.status !== 302) throw new Error(`Cannot authorize: ${decision.status} ${answer}`);
  return decision.headers.get("location")!;
}

// Stand-in for Roblox OAuth 2.0, rooted at `${url}/oauth` (set IDP_URL to `idpUrl`), with test
// controls in process and under /_control. ID tokens are real ES256 JWTs; keys at v1/certs.
import { Hono } from "hono";
import { type ListenOptions, serveApp } from "./_serve.ts";
import { createOauthControlApp } from "./oauth_control.ts";
import { createIdTokenSigner } from "./oauth_jwt.ts";
import type { OauthClient, OauthUser } from "./oauth_protocol.ts";
import { createIdpApp } from "./oauth_routes.ts";
import {
  activeAccessGrant,
  createOauthState,
  type Refresh,
  type Revocation,
  SEEDED_UNIVERSES,
  seededUsers,
  type Universe,
} from "./oauth_state.ts";

export type { OauthClient, OauthUser } from "./oauth_protocol.ts";
export type { Refresh, Revocation, Universe } from "./oauth_state.ts";

/** What a live access token may do: its scopes, on the experiences its user picked. */
export interface AccessGrant {
  grantId: string;
  userId: number;
  scopes: string[];
  universeIds: string[];
}

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
  /**
   * Holds the next token request unanswered: `arrived` resolves when it comes, and it is
   * answered once `release()` is called (to order a race by what the test observes).
   */
  holdNextToken(): { arrived: Promise<void>; release(): void };
  revoked(): Revocation[];
  /** Every refresh the token endpoint granted, oldest first. */
  refreshes(): Refresh[];
  /** Offers another experience on the consent page. */
  addUniverse(universe: Universe): void;
  /** What a live access token grants, or null (unknown, expired, revoked): for Open Cloud stand-ins. */
  checkAccessToken(token: string): AccessGrant | null;
  /** Revokes every grant of `userId`, as the user does from their Roblox account settings. */
  revokeUserGrants(userId: number): void;
  /**
   * Plays the consent page's "Allow" for `userId` over HTTP; returns the redirect Location. When
   * the page offers experiences, ticks `universeIds` (default: the first one offered).
   */
  authorizeAutomatically(
    authorizeUrl: string,
    userId: number,
    options?: { universeIds?: string[] },
  ): Promise<string>;
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
    holdNextToken() {
      let arrived!: () => void;
      let release!: () => void;
      const arrival = new Promise<void>((resolve) => arrived = resolve);
      const released = new Promise<void>((resolve) => release = resolve);
      state.tokenHolds.push({ arrived, released });
      return { arrived: arrival, release };
    },
    clearFailures() {
      state.denials.clear();
      state.tokenFailures.clear();
      state.userinfoFailures.clear();
    },
    revoked: () => state.revocations.map((revocation) => ({ ...revocation })),
    refreshes: () => state.refreshes.map((refresh) => ({ ...refresh })),
    addUniverse(universe: Universe) {
      state.universes.set(universe.id, { ...universe });
    },
    checkAccessToken(token: string): AccessGrant | null {
      const grant = activeAccessGrant(state, token);
      if (!grant) return null;
      return {
        grantId: grant.id,
        userId: grant.userId,
        scopes: [...grant.scopes],
        universeIds: [...grant.universeIds],
      };
    },
    revokeUserGrants(userId: number) {
      for (const { grant } of state.tokens.values()) {
        if (grant.userId === userId) grant.revoked = true;
      }
    },
    authorizeAutomatically,
  };
  options.clients?.forEach(controls.registerClient);
  SEEDED_UNIVERSES.forEach(controls.addUniverse);

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
 * `userId` (and the experiences to grant, when it offers some), as a browser would. Returns the Location the IdP redirects to (code and state, or an
 * error when the request is refused or the deny switch is armed).
 */
async function authorizeAutomatically(
  authorizeUrl: string,
  userId: number,
  options: { universeIds?: string[] } = {},
): Promise<string> {
  const page = await fetch(authorizeUrl, { redirect: "manual" });
  const body = await page.text();
  if (page.status === 302) return page.headers.get("location")!;
  if (page.status !== 200) throw new Error(`Cannot authorize: ${page.status} ${body}`);
  const url = new URL(authorizeUrl);
  const form = new URLSearchParams(url.searchParams);
  form.set("decision", "allow");
  form.set("user_id", String(userId));
  if (body.includes('name="universe_id"')) {
    for (const id of options.universeIds ?? [SEEDED_UNIVERSES[0]!.id]) {
      form.append("universe_id", id);
    }
  }
  const decision = await fetch(new URL(`${url.pathname}/decision`, url), {
    method: "POST",
    body: form,
    redirect: "manual",
  });
  const answer = await decision.text();
  if (decision.status !== 302) throw new Error(`Cannot authorize: ${decision.status} ${answer}`);
  return decision.headers.get("location")!;
}

import { Shots } from "./_shots.ts";
import type { AuthorizeRequest, OauthClient, OauthUser } from "./oauth_protocol.ts";

/** A call to v1/token/revoke; `kind` says what the token was, "unknown" when not recognised. */
export interface Revocation {
  token: string;
  kind: "access_token" | "refresh_token" | "unknown";
  clientId: string;
  userId: number | null;
  at: number;
}

/** A refresh the token endpoint granted (a `refresh_token` grant that succeeded). */
export interface Refresh {
  grantId: string;
  clientId: string;
  at: number;
}

/** An experience the consent page offers (Open Cloud scopes grant access to the ones picked). */
export interface Universe {
  id: string;
  name: string;
}

export interface AuthCode extends AuthorizeRequest {
  userId: number;
  /** The experiences the user picked on the consent page (Open Cloud scopes only). */
  universeIds: string[];
  expiresAt: number;
  used: boolean;
  grant?: Grant;
}

/**
 * What one code exchange granted, across its refreshes. Revoking any of its tokens, or presenting
 * a refresh token that was already used, revokes it all.
 */
export interface Grant {
  id: string;
  clientId: string;
  userId: number;
  scopes: string[];
  universeIds: string[];
  /** The refresh token that works now; earlier ones are spent. */
  refreshToken: string;
  revoked: boolean;
}

/** An issued token: access tokens stay valid until they expire (or the grant is revoked). */
export interface IssuedToken {
  grant: Grant;
  kind: "access_token" | "refresh_token";
  issuedAt: number;
  expiresAt: number;
}

/** Everything the OAuth stand-in remembers, in memory, for the life of one instance. */
export interface OauthState {
  now: () => number;
  clients: Map<string, OauthClient>;
  users: Map<number, OauthUser>;
  universes: Map<string, Universe>;
  codes: Map<string, AuthCode>;
  tokens: Map<string, IssuedToken>;
  revocations: Revocation[];
  refreshes: Refresh[];
  denials: Shots<true>;
  tokenFailures: Shots<{ status: 400 | 401 | 500; error: string }>;
  userinfoFailures: Shots<{ status: 401 | 500 }>;
  /** Token requests to hold: each is told when one arrives and answers once released. */
  tokenHolds: { arrived: () => void; released: Promise<void> }[];
}

/** Creates empty state on the given clock. */
export function createOauthState(now: () => number): OauthState {
  return {
    now,
    clients: new Map(),
    users: new Map(),
    universes: new Map(),
    codes: new Map(),
    tokens: new Map(),
    revocations: [],
    refreshes: [],
    denials: new Shots(),
    tokenFailures: new Shots(),
    userinfoFailures: new Shots(),
    tokenHolds: [],
  };
}

/** The live access token's grant, or null when it is unknown, expired, revoked or not an access token. */
export function activeAccessGrant(state: OauthState, token: string | undefined): Grant | null {
  const issued = token ? state.tokens.get(token) : undefined;
  if (!issued || issued.kind !== "access_token" || issued.grant.revoked) return null;
  return state.now() < issued.expiresAt ? issued.grant : null;
}

/** The three players every stand-in starts with; one has no avatar. */
export function seededUsers(origin: string): OauthUser[] {
  return [
    {
      id: 1001,
      username: "BlockBuilder",
      displayName: "Block Builder",
      picture: `${origin}/_avatars/1001.svg`,
      createdAt: 1_577_836_800,
    },
    {
      id: 1002,
      username: "PixelPilot",
      displayName: "Pixel Pilot",
      picture: `${origin}/_avatars/1002.svg`,
      createdAt: 1_609_459_200,
    },
    { id: 1003, username: "QuietNed", displayName: "Ned", picture: null, createdAt: 1_640_995_200 },
  ];
}

/** The two experiences every stand-in offers on its consent page. */
export const SEEDED_UNIVERSES: Universe[] = [
  { id: "5550001", name: "Block Party" },
  { id: "5550002", name: "Pixel Race" },
];

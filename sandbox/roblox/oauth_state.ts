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

export interface AuthCode extends AuthorizeRequest {
  userId: number;
  expiresAt: number;
  used: boolean;
  grant?: Grant;
}

/** The tokens one code exchange handed out; revoking either token revokes both. */
export interface Grant {
  clientId: string;
  userId: number;
  scopes: string[];
  accessToken: string;
  refreshToken: string;
  accessExpiresAt: number;
  revoked: boolean;
}

/** Everything the OAuth stand-in remembers, in memory, for the life of one instance. */
export interface OauthState {
  now: () => number;
  clients: Map<string, OauthClient>;
  users: Map<number, OauthUser>;
  codes: Map<string, AuthCode>;
  /** Access and refresh tokens, both pointing at their grant. */
  tokens: Map<string, Grant>;
  revocations: Revocation[];
  denials: Shots<true>;
  tokenFailures: Shots<{ status: 400 | 401 | 500; error: string }>;
  userinfoFailures: Shots<{ status: 401 | 500 }>;
}

/** Creates empty state on the given clock. */
export function createOauthState(now: () => number): OauthState {
  return {
    now,
    clients: new Map(),
    users: new Map(),
    codes: new Map(),
    tokens: new Map(),
    revocations: [],
    denials: new Shots(),
    tokenFailures: new Shots(),
    userinfoFailures: new Shots(),
  };
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

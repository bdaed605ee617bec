/** The Roblox OAuth stand-in with one registered client, for the stand-in's own tests. */
import assert from "node:assert/strict";
import {
  createOauthTestClient,
  type OauthStandIn,
  startOauthStandIn,
} from "../../sandbox/roblox/mod.ts";

export const REDIRECT_URI = "http://127.0.0.1:8000/auth/idp/callback";
export const CLIENT = {
  clientId: "1234567890",
  clientSecret: "rbx-secret",
  redirectUris: [REDIRECT_URI],
};

export async function expectOauthError(res: Response, status: number, error: string) {
  assert.equal(res.status, status);
  const body = await res.json();
  assert.equal(body.error, error, body.error_description);
  assert.equal(typeof body.error_description, "string");
}

export type Fixture = {
  standIn: OauthStandIn;
  rp: ReturnType<typeof createOauthTestClient>;
  clock: { now: number };
};

export async function withStandIn(fn: (fixture: Fixture) => Promise<void>) {
  const clock = { now: 1_750_000_000_000 };
  const standIn = await startOauthStandIn({ now: () => clock.now, clients: [CLIENT] });
  try {
    await fn({ standIn, rp: createOauthTestClient(standIn, CLIENT), clock });
  } finally {
    await standIn.close();
  }
}

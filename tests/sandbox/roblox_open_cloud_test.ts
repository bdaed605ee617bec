// The Roblox stand-ins acting for a studio through OAuth 2.0: experiences picked on the consent
// page, the refresh token grant, token/resources, introspect, and the Open Cloud endpoints
// (publish, secrets, restartServers) taking the access token.
import assert from "node:assert/strict";
import sodium from "libsodium-wrappers";
import {
  createOauthTestClient,
  postForm,
  startMessagingStandIn,
  startOauthStandIn,
} from "../../sandbox/roblox/mod.ts";
import { CLIENT, expectOauthError } from "../support/oauth_stand_in.ts";

const SCOPES =
  "openid profile universe-messaging-service:publish universe.secret:read universe.secret:write universe:write";

async function withOpenCloud(
  fn: (world: {
    oauth: Awaited<ReturnType<typeof startOauthStandIn>>;
    cloud: Awaited<ReturnType<typeof startMessagingStandIn>>;
    rp: ReturnType<typeof createOauthTestClient>;
    clock: { now: number };
  }) => Promise<void>,
) {
  const clock = { now: 1_750_000_000_000 };
  const oauth = await startOauthStandIn({ now: () => clock.now, clients: [CLIENT] });
  const cloud = await startMessagingStandIn({
    now: () => clock.now,
    checkAccessToken: oauth.checkAccessToken,
  });
  try {
    await fn({ oauth, cloud, rp: createOauthTestClient(oauth, CLIENT), clock });
  } finally {
    await cloud.close();
    await oauth.close();
  }
}

function refresh(oauth: { idpUrl: string }, refreshToken: string) {
  return postForm(`${oauth.idpUrl}/v1/token`, {
    grant_type: "refresh_token",
    refresh_token: refreshToken,
    client_id: CLIENT.clientId,
    client_secret: CLIENT.clientSecret,
  });
}

function bearer(token: string, body?: unknown): RequestInit {
  return {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

Deno.test("the consent page grants the experiences picked, listed by token/resources", async () => {
  await withOpenCloud(async ({ oauth, rp }) => {
    // When
    const page = await (await fetch(rp.authorizeUrl("a".repeat(43), { scope: SCOPES }))).text();
    const { code, verifier } = await rp.getCode(1001, { scope: SCOPES });
    const exchanged = await (await rp.exchange(code, verifier)).json();
    const resources = await postForm(`${oauth.idpUrl}/v1/token/resources`, {
      token: exchanged.access_token,
      client_id: CLIENT.clientId,
      client_secret: CLIENT.clientSecret,
    });

    // Then
    assert.ok(page.includes("Block Party") && page.includes("Pixel Race"));
    assert.equal(exchanged.scope, SCOPES);
    assert.deepEqual(await resources.json(), {
      resource_infos: [{
        owner: { id: "1001", type: "User" },
        resources: { universe: { ids: ["5550001"] } },
      }],
    });
  });
});

Deno.test("a refresh token works once: it rotates, and a spent one presented again ends the grant", async () => {
  await withOpenCloud(async ({ oauth, rp }) => {
    // Given
    const { code, verifier } = await rp.getCode(1001, { scope: SCOPES });
    const first = await (await rp.exchange(code, verifier)).json();

    // When
    const second = await refresh(oauth, first.refresh_token);
    const rotated = await second.json();
    const replay = await refresh(oauth, first.refresh_token);

    // Then
    assert.equal(second.status, 200);
    assert.notEqual(rotated.refresh_token, first.refresh_token);
    assert.equal(rotated.expires_in, 899);
    await expectOauthError(replay, 400, "invalid_grant");
    await expectOauthError(await refresh(oauth, rotated.refresh_token), 400, "invalid_grant");
    assert.equal(oauth.checkAccessToken(rotated.access_token), null);
    assert.equal(oauth.refreshes().length, 1);
  });
});

Deno.test("introspect answers active for a live token and inactive once revoked", async () => {
  await withOpenCloud(async ({ oauth, rp }) => {
    const { code, verifier } = await rp.getCode(1001, { scope: SCOPES });
    const tokens = await (await rp.exchange(code, verifier)).json();
    const introspect = (token: string) =>
      postForm(`${oauth.idpUrl}/v1/token/introspect`, {
        token,
        client_id: CLIENT.clientId,
        client_secret: CLIENT.clientSecret,
      }).then((res) => res.json());

    const live = await introspect(tokens.access_token);
    await rp.revoke(tokens.refresh_token);
    const after = await introspect(tokens.access_token);

    assert.equal(live.active, true);
    assert.equal(live.sub, "1001");
    assert.equal(live.scope, SCOPES);
    assert.deepEqual(after, { active: false });
  });
});

Deno.test("Open Cloud takes the access token for publish, secrets and restartServers", async () => {
  await withOpenCloud(async ({ cloud, rp, clock }) => {
    // Given
    await sodium.ready;
    const { code, verifier } = await rp.getCode(1001, { scope: SCOPES });
    const { access_token: token } = await (await rp.exchange(code, verifier)).json();
    const universe = `${cloud.url}/cloud/v2/universes/5550001`;
    const seal = (key: { secret: string }, value: string) =>
      sodium.to_base64(
        sodium.crypto_box_seal(
          value,
          sodium.from_base64(key.secret, sodium.base64_variants.ORIGINAL),
        ),
        sodium.base64_variants.ORIGINAL,
      );

    // When
    const published = await fetch(
      `${universe}:publishMessage`,
      bearer(token, { topic: "svc", message: "{}" }),
    );
    const otherUniverse = await fetch(
      `${cloud.url}/cloud/v2/universes/5550002:publishMessage`,
      bearer(token, { topic: "svc", message: "{}" }),
    );
    const publicKey = await (await fetch(`${universe}/secrets/public-key`, bearer(token))).json();
    const secret = { id: "blocklink", key_id: publicKey.key_id, domain: "api.example.com" };
    const created = await fetch(
      `${universe}/secrets`,
      bearer(token, { ...secret, secret: seal(publicKey, "bl_first") }),
    );
    const duplicate = await fetch(
      `${universe}/secrets`,
      bearer(token, { ...secret, secret: seal(publicKey, "bl_again") }),
    );
    const updated = await fetch(`${universe}/secrets/blocklink`, {
      ...bearer(token, { key_id: publicKey.key_id, secret: seal(publicKey, "bl_second") }),
      method: "PATCH",
    });
    const wrongKey = await fetch(
      `${universe}/secrets`,
      bearer(token, { ...secret, id: "other", key_id: "1", secret: seal(publicKey, "x") }),
    );
    const listed = await (await fetch(`${universe}/secrets`, bearer(token))).json();
    const restarted = await fetch(
      `${universe}:restartServers`,
      bearer(token, { bleedOffServers: true, bleedOffDurationMinutes: 5 }),
    );

    // Then
    assert.equal(published.status, 200);
    assert.equal(cloud.attempts()[0]!.via, "oauth");
    assert.equal(otherUniverse.status, 403);
    assert.match(publicKey.key_id, /^\d+$/);
    assert.equal(sodium.from_base64(publicKey.secret, sodium.base64_variants.ORIGINAL).length, 32);
    assert.equal(created.status, 201);
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.headers.get("content-type"), "application/problem+json");
    assert.equal((await duplicate.json()).status, 409);
    assert.equal(updated.status, 200);
    assert.equal(wrongKey.status, 400);
    assert.deepEqual(listed.secrets.map((s: { id: string }) => s.id), ["blocklink"]);
    assert.equal("secret" in listed.secrets[0], false);
    assert.equal(cloud.openSecret("5550001", "blocklink"), "bl_second");
    assert.equal(restarted.status, 200);
    assert.deepEqual(cloud.restarts(), [{
      universeId: "5550001",
      bleedOffServers: true,
      bleedOffDurationMinutes: 5,
      at: clock.now,
    }]);
  });
});

Deno.test("the secrets API answers 429 past 120 requests a minute per authorization", async () => {
  await withOpenCloud(async ({ cloud, rp, clock }) => {
    const { code, verifier } = await rp.getCode(1001, { scope: SCOPES });
    const { access_token: token } = await (await rp.exchange(code, verifier)).json();
    const url = `${cloud.url}/cloud/v2/universes/5550001/secrets/public-key`;
    const statuses = [];
    for (let i = 0; i < 121; i++) {
      const res = await fetch(url, bearer(token));
      await res.body?.cancel();
      statuses.push(res.status);
    }
    clock.now += 60_000;
    const nextMinute = await fetch(url, bearer(token));
    await nextMinute.body?.cancel();

    assert.deepEqual(statuses.filter((s) => s === 200).length, 120);
    assert.equal(statuses.at(-1), 429);
    assert.equal(nextMinute.status, 200);
  });
});

// Connecting a game with Roblox OAuth from its settings, publishing with the grant across
// refreshes and instances, losing the grant and reconnecting, and disconnecting.
import assert from "node:assert/strict";
import { call } from "../support/test_app.ts";
import { createKeyAs, getPage, postJson, signInDeveloper } from "../support/dashboard.ts";
import { CONNECT_APP, connectGame, startConnectWorld } from "../support/roblox_connect.ts";
import { getAccessToken } from "../../lib/roblox/access_token.ts";
import { startTeam } from "../support/team.ts";
import { assertErrorCode } from "../support/assertions.ts";

const FIFTEEN_MINUTES = 15 * 60_000;

async function ping(world: Awaited<ReturnType<typeof startConnectWorld>>) {
  const res = await postJson(
    world.t.app,
    `/dashboard/projects/${world.projectId}/ping`,
    {},
    { jar: world.owner.jar },
  );
  return await res.json();
}

async function eventsFlag(world: Awaited<ReturnType<typeof startConnectWorld>>, apiKey: string) {
  const res = await call(world.t.app, "/v1/project", { apiKey });
  return (await res.json()).events;
}

Deno.test("an owner connects the game with Roblox and events publish with the grant across a refresh", async () => {
  await using world = await startConnectWorld();
  const { key } = await createKeyAs(world.t.app, world.owner, world.projectId);

  // When
  const callback = await connectGame(world);
  const page = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/settings`,
    world.owner.jar,
  )).text();
  const first = await ping(world);
  world.clock.advance(FIFTEEN_MINUTES);
  const afterExpiry = await ping(world);

  // Then: connected to the one experience granted, by whom, with the scopes
  assert.equal(callback.status, 303);
  assert.equal(
    callback.headers.get("location"),
    `/dashboard/projects/${world.projectId}/settings#roblox`,
  );
  assert.match(page, /data-testid="roblox-connected"/);
  assert.match(page, /universe 5550001/);
  assert.match(page, /@BlockBuilder/);
  assert.match(page, /universe\.secret:write/);
  assert.equal(await eventsFlag(world, key), true);
  // Published with Authorization: Bearer, the second after one refresh
  assert.deepEqual([first.ok, afterExpiry.ok], [true, true]);
  assert.deepEqual(world.cloud.attempts().map((a) => [a.universeId, a.via, a.status]), [
    ["5550001", "oauth", 200],
    ["5550001", "oauth", 200],
  ]);
  assert.equal(world.oauth.refreshes().length, 1);
  // Both tokens are sealed at rest, bound to their purpose
  const tokens = (await world.t.kv.get<Record<string, string>>(["roblox_tokens", world.projectId]))
    .value!;
  assert.match(tokens.refreshTokenEnc!, /^v2\.[^.]+\.roblox_refresh_token\./);
  assert.match(tokens.accessTokenEnc!, /^v2\.[^.]+\.roblox_access_token\./);
  const audit = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/audit`,
    world.owner.jar,
  )).text();
  assert.match(audit, /Game connected with Roblox/);
});

Deno.test("two instances needing a refresh at once make one refresh, and both use its token", async () => {
  await using world = await startConnectWorld();
  await connectGame(world);
  const other = await world.openInstance();
  world.clock.advance(FIFTEEN_MINUTES);

  // When: the first instance's refresh is held at Roblox while the second needs a token too
  const hold = world.oauth.holdNextToken();
  const first = getAccessToken(world.t.ctx, world.projectId);
  await hold.arrived;
  const second = getAccessToken(other.ctx, world.projectId);
  hold.release();
  const [a, b] = await Promise.all([first, second]);

  // Then
  assert.equal(a.kind, "token");
  assert.deepEqual(b, a);
  assert.equal(world.oauth.refreshes().length, 1);
  assert.notEqual(world.oauth.checkAccessToken((a as { token: string }).token), null);
});

Deno.test("a revoked grant turns events off and shows Reconnect; reconnecting turns them on", async () => {
  await using world = await startConnectWorld();
  const { key } = await createKeyAs(world.t.app, world.owner, world.projectId);
  await connectGame(world);
  const settings = `/dashboard/projects/${world.projectId}/settings`;

  // When: the player revokes the app from their Roblox account, and the token expires
  world.oauth.revokeUserGrants(1001);
  world.clock.advance(FIFTEEN_MINUTES);
  const refused = await ping(world);
  world.clock.advance(11_000); // past the instance's 10 s cache of the publish target
  const lostPage = await (await getPage(world.t.app, settings, world.owner.jar)).text();
  const eventsWhileLost = await eventsFlag(world, key);
  const reconnect = await connectGame(world);
  const pageAfter = await (await getPage(world.t.app, settings, world.owner.jar)).text();
  const again = await ping(world);

  // Then
  assert.equal(refused.ok, false);
  assert.match(refused.message, /reconnect/i);
  assert.match(lostPage, /data-testid="roblox-lost"/);
  assert.match(lostPage, /data-testid="roblox-reconnect"/);
  assert.equal(eventsWhileLost, false);
  assert.equal(reconnect.status, 303);
  assert.match(pageAfter, /data-testid="roblox-connected"/);
  assert.equal(await eventsFlag(world, key), true);
  assert.equal(again.ok, true);
});

Deno.test("of several experiences granted the member picks one; events wait for it", async () => {
  await using world = await startConnectWorld();
  const { key } = await createKeyAs(world.t.app, world.owner, world.projectId);
  await connectGame(world, { universeIds: ["5550001", "5550002"] });
  const eventsBefore = await eventsFlag(world, key);
  const outside = await postJson(
    world.t.app,
    `/dashboard/projects/${world.projectId}/roblox/universe`,
    { universeId: "999" },
    { jar: world.owner.jar },
  );
  const chosen = await postJson(
    world.t.app,
    `/dashboard/projects/${world.projectId}/roblox/universe`,
    { universeId: "5550002" },
    { jar: world.owner.jar },
  );
  await ping(world);

  assert.equal(eventsBefore, false);
  assert.equal(outside.status, 400);
  assert.equal(chosen.status, 200);
  assert.equal(await eventsFlag(world, key), true);
  assert.deepEqual(world.cloud.attempts().map((a) => a.universeId), ["5550002"]);
});

Deno.test("Disconnect revokes the refresh token at Roblox and forgets the connection", async () => {
  await using world = await startConnectWorld();
  await connectGame(world);
  const token = await getAccessToken(world.t.ctx, world.projectId);

  const res = await postJson(
    world.t.app,
    `/dashboard/projects/${world.projectId}/roblox/disconnect`,
    undefined,
    { jar: world.owner.jar },
  );

  assert.equal(res.status, 200);
  assert.deepEqual(world.oauth.revoked().map((r) => [r.kind, r.clientId]), [
    ["refresh_token", CONNECT_APP.clientId],
  ]);
  assert.equal(world.oauth.checkAccessToken((token as { token: string }).token), null);
  assert.equal((await world.t.kv.get(["roblox_tokens", world.projectId])).value, null);
  const page = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/settings`,
    world.owner.jar,
  )).text();
  assert.match(page, /data-testid="roblox-not-connected"/);
  const audit = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/audit`,
    world.owner.jar,
  )).text();
  assert.match(audit, /Game disconnected/);
});

Deno.test("only an admin or the owner saves the app connecting the game", async () => {
  await using w = await startTeam();
  const save = (role: "developer" | "admin") =>
    postJson(w.app, `/dashboard/projects/${w.projectId}/settings`, {
      connectClientId: "7770001",
      connectClientSecret: "s3cret",
    }, { jar: w.as[role].jar });

  const byDeveloper = await save("developer");
  const byAdmin = await save("admin");

  await assertErrorCode(byDeveloper, 403, "insufficient_role");
  assert.equal(byAdmin.status, 200);
  assert.equal((await byAdmin.json()).settings.connectApp.clientSecretSet, true);
});

Deno.test("a refresh token past its 90 days ends the connection like a revoked one", async () => {
  await using world = await startConnectWorld();
  await connectGame(world);

  world.clock.advance(91 * 24 * 3_600_000);
  // The dashboard session is long over too: the owner signs in again.
  world.owner.jar = (await signInDeveloper(world.t.app, world.owner.wallet)).jar;
  const refused = await ping(world);
  const page = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/settings`,
    world.owner.jar,
  )).text();

  assert.equal(refused.ok, false);
  assert.match(page, /data-testid="roblox-reconnect"/);
  assert.equal(world.cloud.attempts().length, 0, "nothing was published without a grant");
});

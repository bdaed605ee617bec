// The API key installed in a connected game's secrets, and its rotation with a restart and the
// old key's revocation after the bleed-off.
import assert from "node:assert/strict";
import { call } from "../support/test_app.ts";
import { getPage, postJson } from "../support/dashboard.ts";
import sodium from "libsodium-wrappers";
import { connectGame, startConnectWorld } from "../support/roblox_connect.ts";
import { getAccessToken } from "../../lib/roblox/access_token.ts";

const ORIGINAL = sodium.base64_variants.ORIGINAL;

type World = Awaited<ReturnType<typeof startConnectWorld>>;

function post(world: World, path: string, json?: unknown) {
  return postJson(world.t.app, `/dashboard/projects/${world.projectId}/roblox/${path}`, json, {
    jar: world.owner.jar,
  });
}

async function storeText(kv: Deno.Kv): Promise<string> {
  const values = [];
  for await (const entry of kv.list({ prefix: [] })) values.push(entry.value);
  return JSON.stringify(values, (_, v) => typeof v === "bigint" ? v.toString() : v);
}

async function projectStatus(world: World, apiKey: string): Promise<number> {
  const res = await call(world.t.app, "/v1/project", { apiKey });
  await res.body?.cancel();
  return res.status;
}

Deno.test("Install key in game writes a new key, sealed, into the game's secrets; /v1 accepts it", async () => {
  await using world = await startConnectWorld();
  await connectGame(world);

  // When
  const res = await post(world, "install-key", { scopes: ["read"], secretId: "blocklink" });
  const installed = world.cloud.openSecret("5550001", "blocklink");
  const [stored] = world.cloud.secrets("5550001");
  const again = await post(world, "install-key", {});

  // Then: the stand-in opened it with the universe's private key, and it is a working key
  assert.equal(res.status, 201);
  assert.match(installed!, /^blk_live_/);
  assert.equal(stored!.domain, "localhost");
  assert.equal(await projectStatus(world, installed!), 200);
  const pay = await call(world.t.app, "/v1/tx/transfer-sol", {
    method: "POST",
    apiKey: installed!,
    json: { to: { address: "11111111111111111111111111111111" }, amount: "1", idempotencyKey: "k" },
  });
  assert.equal(pay.status, 403, "the key has only the read scope");
  await pay.body?.cancel();
  // Never stored, shown or logged in clear
  assert.equal((await storeText(world.t.kv)).includes(installed!), false);
  const page = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/settings`,
    world.owner.jar,
  )).text();
  assert.equal(page.includes(installed!), false);
  assert.match(page, /data-testid="game-key-installed"/);
  assert.equal(again.status, 409);
  // And the keys page says which key is the game's
  const keys = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/keys`,
    world.owner.jar,
  )).text();
  assert.match(
    keys,
    /data-testid="key-in-game">Installed in the game \(secret <span class="mono">blocklink<\/span>\)/,
  );
  assert.equal(keys.match(/data-testid="key-in-game"/g)?.length, 1);
});

Deno.test("a secret that already exists is updated; a bad secret name is refused", async () => {
  await using world = await startConnectWorld();
  await connectGame(world);
  const badId = await post(world, "install-key", { secretId: "9bad" });
  // The game already has a secret of that name (a key pasted by hand before)
  const token = await getAccessToken(world.t.ctx, world.projectId) as { token: string };
  const base = `${world.cloud.url}/cloud/v2/universes/5550001/secrets`;
  const auth = { authorization: `Bearer ${token.token}`, "content-type": "application/json" };
  const publicKey = await (await fetch(`${base}/public-key`, { headers: auth })).json();
  await sodium.ready;
  const pasted = await fetch(base, {
    method: "POST",
    headers: auth,
    body: JSON.stringify({
      id: "game_key",
      key_id: publicKey.key_id,
      domain: "localhost",
      secret: sodium.to_base64(
        sodium.crypto_box_seal("pasted-by-hand", sodium.from_base64(publicKey.secret, ORIGINAL)),
        ORIGINAL,
      ),
    }),
  });
  await pasted.body?.cancel();

  const over = await post(world, "install-key", { secretId: "game_key" });
  const installed = world.cloud.openSecret("5550001", "game_key")!;

  assert.equal(badId.status, 400);
  assert.equal(pasted.status, 201);
  assert.equal(over.status, 201);
  assert.match(installed, /^blk_live_/);
  assert.equal(world.cloud.secrets("5550001").length, 1);
  assert.equal(await projectStatus(world, installed), 200);
});

Deno.test("a key whose secret cannot be written is revoked at once", async () => {
  await using world = await startConnectWorld();
  await connectGame(world);
  // The grant has used 119 of its 120 secrets requests this minute: the public key is the 120th
  const token = await getAccessToken(world.t.ctx, world.projectId) as { token: string };
  const url = `${world.cloud.url}/cloud/v2/universes/5550001/secrets/public-key`;
  for (let i = 0; i < 119; i++) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token.token}` } });
    await res.body?.cancel();
  }

  const res = await post(world, "install-key", {});
  const keys = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/audit`,
    world.owner.jar,
  )).text();

  assert.equal(res.status, 502);
  assert.equal(world.cloud.secrets("5550001").length, 0);
  assert.match(keys, /API key revoked/);
  let active = 0;
  for await (
    const entry of world.t.kv.list<{ revokedAt: number | null }>({
      prefix: ["api_keys", world.projectId],
    })
  ) if (entry.value.revokedAt === null) active++;
  assert.equal(active, 0);
});

Deno.test("rotation installs a new key, restarts the servers, and revokes the old key only after the bleed-off", async () => {
  await using world = await startConnectWorld();
  await connectGame(world);
  await post(world, "install-key", {});
  const oldKey = world.cloud.openSecret("5550001", "blocklink")!;

  // When
  const rotated = await post(world, "rotate", { bleedOffMinutes: "5" });
  const newKey = world.cloud.openSecret("5550001", "blocklink")!;
  const during = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/settings`,
    world.owner.jar,
  )).text();
  world.clock.advance(5 * 60_000);
  await world.worker.runDue();
  const oldAtBleedOffEnd = await projectStatus(world, oldKey);
  world.clock.advance(60_000);
  await world.worker.runDue();
  world.clock.advance(11_000); // past the instance's key cache
  const oldAfter = await projectStatus(world, oldKey);
  const after = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/settings`,
    world.owner.jar,
  )).text();

  // Then
  assert.equal(rotated.status, 200);
  assert.notEqual(newKey, oldKey);
  assert.deepEqual(world.cloud.restarts().map((r) => [r.universeId, r.bleedOffDurationMinutes]), [
    ["5550001", 5],
  ]);
  assert.match(during, /data-testid="rotation"/);
  assert.match(during, /Servers restarted/);
  assert.equal(oldAtBleedOffEnd, 200, "the old key still works while servers may use it");
  assert.equal(oldAfter, 401);
  assert.equal(await projectStatus(world, newKey), 200);
  assert.equal(after.includes('data-testid="rotation"'), false);
  const audit = await (await getPage(
    world.t.app,
    `/dashboard/projects/${world.projectId}/audit`,
    world.owner.jar,
  )).text();
  for (
    const label of [
      "API key installed in the game",
      "Game servers restarted",
      "Replaced game key revoked",
    ]
  ) {
    assert.match(audit, new RegExp(label));
  }
});

Deno.test("a failed restart keeps the old key valid, and rotating again resumes at the restart", async () => {
  await using world = await startConnectWorld();
  await connectGame(world);
  await post(world, "install-key", {});
  const oldKey = world.cloud.openSecret("5550001", "blocklink")!;
  const settings = `/dashboard/projects/${world.projectId}/settings`;
  world.cloud.failNextRestart();

  // When: Roblox answers the restart with a 500
  const failed = await post(world, "rotate", { bleedOffMinutes: "2" });
  const newKey = world.cloud.openSecret("5550001", "blocklink")!;
  const waiting = await (await getPage(world.t.app, settings, world.owner.jar)).text();
  world.clock.advance(60 * 60_000);
  await world.worker.runDue();
  const oldWhileWaiting = await projectStatus(world, oldKey);
  const resumed = await post(world, "rotate", { bleedOffMinutes: "2" });
  world.clock.advance(3 * 60_000);
  await world.worker.runDue();
  world.clock.advance(11_000); // past the instance's key cache

  // Then: the new key is in the game, the old one works until the restart's bleed-off has passed
  assert.equal(failed.status, 502);
  assert.notEqual(newKey, oldKey);
  assert.match(waiting, /Servers not restarted yet/);
  assert.match(waiting, /Restart servers and finish/);
  assert.equal(oldWhileWaiting, 200, "nothing revokes the old key before a restart");
  assert.equal(resumed.status, 200);
  assert.equal(world.cloud.openSecret("5550001", "blocklink"), newKey, "no second new key");
  assert.deepEqual(world.cloud.restarts().map((r) => r.bleedOffDurationMinutes), [2]);
  assert.equal(await projectStatus(world, oldKey), 401);
  assert.equal(await projectStatus(world, newKey), 200);
});

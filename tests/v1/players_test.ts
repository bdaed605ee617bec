import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";
import { linkWallet } from "../../kv/links.ts";
import { createKeyAs, createProjectAs, getPage, signInDeveloper } from "../support/dashboard.ts";

const WALLET_A = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const WALLET_B = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

Deno.test("GET /v1/players/:userId/wallet answers the player's link or nulls", async () => {
  await using env = await createTestApp();
  const { project, apiKey } = await createTestProject(env);
  const other = await createTestProject(env);
  await linkWallet(env.kv, project.id, { userId: 42, address: WALLET_A, now: 1_700_000_000_000 });
  await linkWallet(env.kv, other.project.id, { userId: 7, address: WALLET_B, now: 1 });

  const linked = await call(env.app, "/v1/players/42/wallet", { apiKey });
  assert.deepEqual(await linked.json(), {
    userId: 42,
    address: WALLET_A,
    linkedAt: 1_700_000_000_000,
  });
  // Another project's link is invisible.
  const foreign = await call(env.app, "/v1/players/7/wallet", { apiKey });
  assert.deepEqual(await foreign.json(), { userId: 7, address: null, linkedAt: null });
  const big = await call(env.app, `/v1/players/${Number.MAX_SAFE_INTEGER}/wallet`, { apiKey });
  assert.deepEqual((await big.json()).userId, Number.MAX_SAFE_INTEGER);
});

Deno.test("GET /v1/players/:userId/wallet answers invalid_user_id for anything but a positive integer", async (t) => {
  await using env = await createTestApp();
  const { apiKey } = await createTestProject(env);
  for (const bad of ["0", "-1", "1.5", "abc", "1e3", "9007199254740993", "01", "%20"]) {
    await t.step(bad, async () => {
      const res = await call(env.app, `/v1/players/${bad}/wallet`, { apiKey });
      await assertErrorCode(res, 400, "invalid_user_id");
    });
  }
});

Deno.test("The dashboard's player search reads a user id as GET /v1/players does", async (t) => {
  // Given: a developer's project with player 42 linked.
  await using env = await createTestApp();
  const dev = await signInDeveloper(env.app);
  const { id: projectId } = await createProjectAs(env.app, dev);
  const { key: apiKey } = await createKeyAs(env.app, dev, projectId);
  await linkWallet(env.kv, projectId, { userId: 42, address: WALLET_A, now: 1 });

  // (The search trims what is typed first; the text itself is read as the route reads it.)
  for (const text of ["42", "0042", "042", "+42", "4.2e1", "0", "9007199254740993"]) {
    await t.step(JSON.stringify(text), async () => {
      // When: the same text is a path user id and a dashboard search.
      const path = encodeURIComponent(text);
      const api = await call(env.app, `/v1/players/${path}/wallet`, { apiKey });
      const page = await (await getPage(
        env.app,
        `/dashboard/projects/${projectId}/players?q=${path}`,
        dev.jar,
      )).text();

      // Then: either both read it as player 42, or the route refuses it and the search finds
      // no player by it.
      const apiReads = api.status === 200;
      if (apiReads) assert.equal((await api.json()).address, WALLET_A);
      else await assertErrorCode(api, 400, "invalid_user_id");
      assert.equal(page.includes(WALLET_A), apiReads, `the search found ${text} as a player`);
    });
  }
});

Deno.test("POST /v1/players/wallets answers one key per requested id, duplicates allowed", async () => {
  await using env = await createTestApp();
  const { project, apiKey } = await createTestProject(env);
  await linkWallet(env.kv, project.id, { userId: 1, address: WALLET_A, now: 1 });
  await linkWallet(env.kv, project.id, { userId: 3, address: WALLET_B, now: 1 });
  const res = await call(env.app, "/v1/players/wallets", {
    method: "POST",
    apiKey,
    json: { userIds: [1, 2, 3, 1] },
  });
  assert.deepEqual(await res.json(), { wallets: { "1": WALLET_A, "2": null, "3": WALLET_B } });
  const empty = await call(env.app, "/v1/players/wallets", {
    method: "POST",
    apiKey,
    json: { userIds: [] },
  });
  assert.deepEqual(await empty.json(), { wallets: {} });
});

Deno.test("POST /v1/players/wallets refuses a missing list, more than 200 ids or a bad entry", async (t) => {
  await using env = await createTestApp();
  const { apiKey } = await createTestProject(env);
  const cases: Record<string, unknown> = {
    missing: {},
    "201 ids": { userIds: Array.from({ length: 201 }, (_, i) => i + 1) },
    zero: { userIds: [0] },
    negative: { userIds: [-5] },
    fraction: { userIds: [1.5] },
    string: { userIds: ["12"] },
    "past 2^53": { userIds: [2 ** 53] },
    "not a list": { userIds: 5 },
  };
  for (const [name, json] of Object.entries(cases)) {
    await t.step(name, async () => {
      const res = await call(env.app, "/v1/players/wallets", { method: "POST", apiKey, json });
      await assertErrorCode(res, 400, "invalid_request");
    });
  }
  const ok = await call(env.app, "/v1/players/wallets", {
    method: "POST",
    apiKey,
    json: { userIds: Array.from({ length: 200 }, (_, i) => i + 1) },
  });
  assert.deepEqual(Object.keys((await ok.json()).wallets).length, 200);
});

Deno.test("POST /v1/players/wallets reads 200 ids in batches of 10 keys, not one read per id", async () => {
  await using env = await createTestApp();
  const { apiKey } = await createTestProject(env);
  // Count the store calls the route makes by watching the KV handle itself.
  const calls = { get: 0, getMany: 0, keys: 0 };
  const kv = env.ctx.kv;
  const watched = new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "get") return (...a: unknown[]) => (calls.get++, value.apply(target, a));
      if (prop === "getMany") {
        return (keys: unknown[], ...rest: unknown[]) => {
          calls.getMany++;
          calls.keys = Math.max(calls.keys, keys.length);
          return value.call(target, keys, ...rest);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  await call(env.app, "/v1/project", { apiKey }); // warm the key cache
  Object.assign(calls, { get: 0, getMany: 0, keys: 0 });
  env.ctx.kv = watched;
  const res = await call(env.app, "/v1/players/wallets", {
    method: "POST",
    apiKey,
    json: { userIds: Array.from({ length: 200 }, (_, i) => i + 1) },
  });
  env.ctx.kv = kv;
  assert.deepEqual(res.status, 200);
  assert.deepEqual(calls.get, 0);
  assert.deepEqual(calls.keys <= 10, true);
  // 200 ids in batches of 10 (the quota counter keeps its own handle).
  assert.deepEqual(calls.getMany, 20);
});

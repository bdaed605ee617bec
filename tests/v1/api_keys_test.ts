import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";
import { createApiKey, revokeApiKey } from "../../kv/api_keys.ts";
import { deleteProject } from "../../kv/projects.ts";
import type { DataPathCall } from "../../sandbox/kv_connect/server.ts";
import { roundTripsInSequence, startRemoteStore } from "../support/remote_store.ts";

Deno.test("createApiKey() returns a key of the documented shape and stores only its hash", async () => {
  await using env = await createTestApp();
  const { project } = await createTestProject(env);
  const { plaintext, record } = await createApiKey(env.kv, project.id, env.clock.now());
  assert.ok(/^blk_live_[A-Za-z0-9_-]{43}$/.test(plaintext), plaintext);
  // Checked against WebCrypto, an implementation apart from ours, so keys stored before the hash
  // was computed in place still resolve.
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(plaintext));
  const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
  assert.deepEqual(record.hash, hex);
  for await (const entry of env.kv.list({ prefix: [] })) {
    const stored = JSON.stringify(entry, (_k, v) => typeof v === "bigint" ? String(v) : v);
    assert.deepEqual(
      stored.includes(plaintext.slice(9)),
      false,
      `plaintext found under ${entry.key}`,
    );
  }
});

Deno.test("apiGuard() answers unauthorized for a missing, malformed or unknown key", async (t) => {
  await using env = await createTestApp();
  await createTestProject(env);
  const unknown = "blk_live_" + "A".repeat(43);
  for (
    const [name, key] of [
      ["missing", undefined],
      ["malformed", "hello"],
      ["wrong prefix", "xyz_live_" + "A".repeat(43)],
      ["too short", "blk_live_" + "A".repeat(42)],
      ["unknown", unknown],
    ] as const
  ) {
    await t.step(name, async () => {
      await assertErrorCode(
        await call(env.app, "/v1/project", { apiKey: key }),
        401,
        "unauthorized",
      );
    });
  }
});

Deno.test("apiGuard() rejects a malformed key before reading the store", async () => {
  const env = await createTestApp();
  env.kv.close();
  // A store read would now fail with 500; 401 proves the shape check comes first.
  await assertErrorCode(
    await call(env.app, "/v1/project", { apiKey: "nope" }),
    401,
    "unauthorized",
  );
});

Deno.test("apiGuard() checks the key before the body", async () => {
  await using env = await createTestApp();
  const res = await call(env.app, "/v1/players/wallets", { method: "POST", body: "{" });
  await assertErrorCode(res, 401, "unauthorized");
});

Deno.test("revokeApiKey() stops a key within 30 seconds, on every instance", async () => {
  // Given two instances on one store, both having used the key
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using a = await createTestApp({ kvPath: path });
  await using b = await createTestApp({ kvPath: path, clock: a.clock });
  const { project, apiKey } = await createTestProject(a);
  assert.deepEqual((await call(a.app, "/v1/project", { apiKey })).status, 200);
  assert.deepEqual((await call(b.app, "/v1/project", { apiKey })).status, 200);
  const keyId = (await a.ctx.apiKeys.resolve(apiKey))!.keyId;
  // When the key is revoked
  assert.ok(await revokeApiKey(a.kv, project.id, keyId, a.clock.now()));
  // Then within 30 s neither instance accepts it
  a.clock.advance(30_000);
  await assertErrorCode(await call(a.app, "/v1/project", { apiKey }), 401, "unauthorized");
  await assertErrorCode(await call(b.app, "/v1/project", { apiKey }), 401, "unauthorized");
  // And a second revocation finds nothing to revoke
  assert.deepEqual(await revokeApiKey(a.kv, project.id, keyId, a.clock.now()), false);
  await Deno.remove(path);
});

Deno.test("A key is read in two round trips on an instance's first call, and in one once its cached answer expires", async () => {
  // Given: a key made on one instance, and a second instance on the same remote store
  await using store = await startRemoteStore({ latencyMs: 2 });
  await using a = await createTestApp({ kvPath: store.url });
  await using b = await createTestApp({ kvPath: store.url, clock: a.clock });
  const { apiKey } = await createTestProject(a);
  // The store reads that find the key: its hash's index entry, and its record (with its project)
  const keyReads = async (calls: DataPathCall[]) => {
    store.server.trace = calls;
    assert.deepEqual((await call(b.app, "/v1/project", { apiKey })).status, 200);
    store.server.trace = null;
    return calls.filter((c) =>
      c.kind === "read" && c.keys.some((key) => key.startsWith("api_keys"))
    );
  };
  const recordAndProject = (c: DataPathCall) =>
    c.keys.some((key) => key.startsWith("api_keys ")) &&
    c.keys.some((key) => key.startsWith("projects "));

  // When: the second instance first sees the key
  const first = await keyReads([]);
  // Then: it reads where the key's hash points, then the key's record and project together
  assert.deepEqual(roundTripsInSequence(first), 2, JSON.stringify(first));
  assert.ok(first.some(recordAndProject), JSON.stringify(first));

  // When: it sees the key again after its cached answer expired
  a.clock.advance(11_000);
  const again = await keyReads([]);
  // Then: the record and the project are read in one round trip, the index not again
  assert.deepEqual(roundTripsInSequence(again), 1, JSON.stringify(again));
  assert.ok(again.length === 1 && recordAndProject(again[0]!), JSON.stringify(again));
});

Deno.test("deleteProject() stops the project's keys within 30 seconds", async () => {
  await using env = await createTestApp();
  const { project, apiKey } = await createTestProject(env);
  assert.deepEqual((await call(env.app, "/v1/project", { apiKey })).status, 200);
  assert.ok(await deleteProject(env.kv, project.id, env.clock.now()));
  env.clock.advance(30_000);
  await assertErrorCode(await call(env.app, "/v1/project", { apiKey }), 401, "unauthorized");
});

Deno.test("GET /v1/project answers the key's project", async () => {
  await using env = await createTestApp();
  const { project, apiKey } = await createTestProject(env, { name: "Obby Rush!" });
  await createTestProject(env, { name: "Other game" });
  const res = await call(env.app, "/v1/project", { apiKey });
  assert.deepEqual(res.status, 200);
  assert.deepEqual(await res.json(), {
    id: project.id,
    name: "Obby Rush!",
    slug: "obby-rush",
    cluster: "devnet",
    walletAddress: null,
    linkUrl: "http://localhost:8000/link/obby-rush",
    events: false,
  });
});

import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";

Deno.test("createApp() answers unknown routes with a JSON not_found, with or without a key", async (t) => {
  await using env = await createTestApp();
  const { apiKey } = await createTestProject(env);
  await t.step("without a key", async () => {
    await assertErrorCode(await call(env.app, "/nope"), 404, "not_found");
    await assertErrorCode(await call(env.app, "/v1/nope"), 404, "not_found");
  });
  await t.step("with a valid key", async () => {
    await assertErrorCode(await call(env.app, "/v1/nope", { apiKey }), 404, "not_found");
    await assertErrorCode(
      await call(env.app, "/v1/project", { apiKey, method: "DELETE" }),
      404,
      "not_found",
    );
  });
});

Deno.test("readJsonBody() answers invalid_json for a missing or unparsable body", async (t) => {
  await using env = await createTestApp();
  const { apiKey } = await createTestProject(env);
  for (const [name, body] of [["missing", undefined], ["empty", "  "], ["broken", '{"userIds":']]) {
    await t.step(name!, async () => {
      const res = await call(env.app, "/v1/players/wallets", {
        method: "POST",
        apiKey,
        body,
        headers: { "content-type": "application/json" },
      });
      await assertErrorCode(res, 400, "invalid_json");
    });
  }
});

Deno.test("readJsonBody() lists each schema problem as `path: problem` joined by `; `", async () => {
  await using env = await createTestApp();
  const { apiKey } = await createTestProject(env);
  const res = await call(env.app, "/v1/players/wallets", {
    method: "POST",
    apiKey,
    json: { userIds: [1, -2, "x", 1.5] },
  });
  const body = await assertErrorCode(res, 400, "invalid_request");
  const problems = body.error.message.split("; ");
  assert.deepEqual(problems.length, 3);
  assert.deepEqual(problems.map((p: string) => p.split(":")[0]), [
    "userIds.1",
    "userIds.2",
    "userIds.3",
  ]);

  const missing = await call(env.app, "/v1/players/wallets", { method: "POST", apiKey, json: {} });
  const missingBody = await assertErrorCode(missing, 400, "invalid_request");
  assert.deepEqual(missingBody.error.message.startsWith("userIds: "), true);

  const notObject = await call(env.app, "/v1/players/wallets", {
    method: "POST",
    apiKey,
    json: [],
  });
  const notObjectBody = await assertErrorCode(notObject, 400, "invalid_request");
  assert.deepEqual(notObjectBody.error.message.startsWith("body: "), true);
});

Deno.test("createApp() answers an unexpected failure with internal and no details", async () => {
  const env = await createTestApp();
  const { apiKey } = await createTestProject(env);
  // Given a store that fails every call
  env.kv.close();
  // When a request needs it
  const res = await call(env.app, "/v1/project", { apiKey });
  // Then the answer is a bare internal error
  const body = await assertErrorCode(res, 500, "internal");
  assert.deepEqual(body.error.message, "Internal error");
  assert.deepEqual(JSON.stringify(body).includes("at "), false);
});

Deno.test("GET /health answers ok and the wallet provider, without a key", async (t) => {
  await t.step("managed", async () => {
    await using env = await createTestApp();
    const res = await call(env.app, "/health");
    assert.deepEqual(res.status, 200);
    assert.deepEqual(await res.json(), { ok: true, wallets: "managed" });
  });
  await t.step("none", async () => {
    await using env = await createTestApp({ config: { walletProvider: "none" } });
    assert.deepEqual(await (await call(env.app, "/health")).json(), { ok: true, wallets: "none" });
  });
});

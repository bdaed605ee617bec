/**
 * Scoped API keys: `read` for every route but the transaction routes, `pay` for those. A key
 * without the route's scope answers 403 `insufficient_scope` after its request was counted toward
 * the quotas and before the body is read; keys made before scopes have both.
 */
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";
import { apiKeyKey, type ApiKeyRecord, createApiKey } from "../../kv/api_keys.ts";
import { V1_OPERATIONS } from "../../routes/v1/operations.ts";
import {
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";

const ADDRESS = "Vote111111111111111111111111111111111111111";
const PARAMS: Record<string, string> = {
  userId: "1",
  address: ADDRESS,
  signature: "1".repeat(64),
  idempotencyKey: "key-1",
};

function pathOf(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => PARAMS[name]!);
}

Deno.test("Every /v1 route needs its scope: pay for the transaction routes, read for the others", async (t) => {
  await using env = await createTestApp();
  const { project } = await createTestProject(env);
  const now = env.clock.now();
  const read = (await createApiKey(env.kv, project.id, now, { scopes: ["read"] })).plaintext;
  const pay = (await createApiKey(env.kv, project.id, now, { scopes: ["pay"] })).plaintext;
  for (const op of V1_OPERATIONS.filter((o) => o.keyed !== false)) {
    await t.step(`${op.method.toUpperCase()} ${op.path}`, async () => {
      const needs = op.scope ?? "read";
      const path = pathOf(op.path);
      const method = op.method.toUpperCase();
      const send = (apiKey: string) =>
        call(env.app, path, { method, apiKey, ...(method === "POST" ? { json: {} } : {}) });
      const refused = await send(needs === "pay" ? read : pay);
      const { error } = await assertErrorCode(refused, 403, "insufficient_scope");
      assert.match(error.message, new RegExp(`the ${needs} scope`));
      // The key with the scope gets past the guard (to the route's own answer).
      const allowed = await send(needs === "pay" ? pay : read);
      assert.notEqual((await allowed.json())?.error?.code, "insufficient_scope");
    });
  }
});

Deno.test("A key without pay is refused before its body is read, and still counted", async () => {
  await using env = await createTestApp();
  const { project } = await createTestProject(env);
  const read = (await createApiKey(env.kv, project.id, env.clock.now(), { scopes: ["read"] }))
    .plaintext;
  // Not JSON at all: the scope answers first.
  const broken = await call(env.app, "/v1/tx/transfer-sol", {
    method: "POST",
    apiKey: read,
    body: "{not json",
    headers: { "content-type": "application/json" },
  });
  await assertErrorCode(broken, 403, "insufficient_scope");
  // Each refusal took one of the minute's 600 requests.
  const answers = await Promise.all(
    Array.from(
      { length: 600 },
      () => call(env.app, "/v1/tx/transfer-sol", { method: "POST", apiKey: read, json: {} }),
    ),
  );
  const codes = await Promise.all(answers.map(async (r) => (await r.json()).error.code));
  assert.deepEqual(
    [
      codes.filter((c) => c === "insufficient_scope").length,
      codes.filter((c) => c === "rate_limited").length,
    ],
    [599, 1],
  );
});

Deno.test("A key made before scopes keeps every scope", async () => {
  await using env = await createTestApp();
  const { project, apiKey } = await createTestProject(env);
  // Given: the key's record as versions before scopes stored it.
  const entry = await env.kv.list<ApiKeyRecord>({ prefix: ["api_keys", project.id] }).next();
  const { scopes: _scopes, ...old } = entry.value!.value;
  await env.kv.set(apiKeyKey(project.id, old.id), old);

  assert.equal((await call(env.app, "/v1/project", { apiKey })).status, 200);
  const paid = await call(env.app, "/v1/tx/transfer-sol", {
    method: "POST",
    apiKey,
    json: { to: { address: ADDRESS }, amount: "1", idempotencyKey: "old-key" },
  });
  // Past the scope, at step 6: the project has no wallet.
  await assertErrorCode(paid, 409, "wallet_not_configured");
});

Deno.test("The dashboard creates a key with the scopes chosen and lists them", async () => {
  await using env = await createTestApp();
  const dev = await signInDeveloper(env.app);
  const project = await createProjectAs(env.app, dev);
  const keys = `/dashboard/projects/${project.id}/keys`;

  const form = await postForm(env.app, keys, { scopes: "read" }, { jar: dev.jar });
  assert.equal(form.status, 303);
  const page = await (await getPage(env.app, keys, dev.jar)).text();
  const shown = page.match(/data-testid="new-key-value">([^<]+)</)![1]!;
  assert.ok(page.includes('data-testid="key-scopes">read<'));
  await assertErrorCode(
    await call(env.app, "/v1/tx/mint-token", { method: "POST", apiKey: shown, json: {} }),
    403,
    "insufficient_scope",
  );

  const both = await postJson(env.app, keys, undefined, { jar: dev.jar });
  assert.deepEqual((await both.json()).scopes, ["read", "pay"]);
  const pay = await postJson(env.app, keys, { scopes: ["pay"] }, { jar: dev.jar });
  assert.deepEqual((await pay.json()).scopes, ["pay"]);
  for (const scopes of [[], ["read", "admin"], "everything", 7]) {
    await assertErrorCode(
      await postJson(env.app, keys, { scopes }, { jar: dev.jar }),
      400,
      "invalid_settings",
    );
  }
});

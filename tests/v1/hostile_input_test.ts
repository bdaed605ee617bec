// Defects found by attacking the service (issue 12), one scenario each: bounded bodies, KV key
// parts checked before use, malformed Unicode, slug collisions, the OAuth callback's order.
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp, createTestProject, TEST_BASE_URL } from "../support/test_app.ts";
import { browse, CookieJar, createLinkProject, startLinkWorld } from "../support/sign_in.ts";
import { postJson, signInDeveloper } from "../support/dashboard.ts";
import { createProject, projectSlugKey, updateProject } from "../../kv/projects.ts";

const ORIGIN = new URL(TEST_BASE_URL).origin;

/** A body stream of `total` bytes of spaces that records how many bytes were pulled from it. */
function countingStream(total: number) {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  const counter = { pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (counter.pulled >= total) return controller.close();
      counter.pulled += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { stream, counter };
}

Deno.test("bodyLimit refuses an over-limit body with 413 payload_too_large, by length and while streaming", async (t) => {
  await using app = await createTestApp();
  const { apiKey } = await createTestProject(app);

  await t.step("Content-Length over 16 KB on a JSON route is refused unread", async () => {
    const res = await call(app.app, "/auth/wallet/challenge", {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json" },
      body: `{"address":"${"x".repeat(17 * 1024)}"}`,
    });
    await assertErrorCode(res, 413, "payload_too_large");
  });

  await t.step("a 60 MB stream without Content-Length is cut off near the limit", async () => {
    const { stream, counter } = countingStream(60 * 1024 * 1024);
    const res = await app.app.request(`${TEST_BASE_URL}/auth/wallet/challenge`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json" },
      body: stream,
    });
    await assertErrorCode(res, 413, "payload_too_large");
    assert.ok(counter.pulled < 1024 * 1024, `pulled ${counter.pulled} bytes`);
  });

  await t.step("/v1 JSON bodies are limited to 16 KB", async () => {
    const userIds = Array.from({ length: 200 }, (_, i) => 10 ** 15 + i);
    const ok = await call(app.app, "/v1/players/wallets", {
      method: "POST",
      apiKey,
      json: { userIds },
    });
    assert.deepEqual(ok.status, 200);
    const res = await call(app.app, "/v1/players/wallets", {
      method: "POST",
      apiKey,
      json: { userIds, pad: "x".repeat(16 * 1024) },
    });
    await assertErrorCode(res, 413, "payload_too_large");
  });
});

Deno.test("dashboard forms accept up to 64 KB and refuse more with 413", async () => {
  await using app = await createTestApp();
  const dev = await signInDeveloper(app.app);
  const under = await postJson(app.app, "/dashboard/projects", {
    name: "Big form",
    cluster: "devnet",
    notes: "x".repeat(60 * 1024),
  }, { jar: dev.jar });
  assert.deepEqual(under.status, 201);
  const over = await postJson(app.app, "/dashboard/projects", {
    name: "Too big",
    cluster: "devnet",
    notes: "x".repeat(65 * 1024),
  }, { jar: dev.jar });
  await assertErrorCode(over, 413, "payload_too_large");
});

Deno.test("GET /v1/tx/:idempotencyKey with an over-long key is 404 not_found, not 500", async () => {
  await using app = await createTestApp();
  const { apiKey } = await createTestProject(app);
  for (const key of ["k".repeat(129), "k".repeat(5000), "%F0%9F%98%80".repeat(600)]) {
    const res = await call(app.app, `/v1/tx/${key}`, { apiKey });
    await assertErrorCode(res, 404, "not_found");
  }
});

Deno.test("an over-long to.address is wallet_not_configured at step 6, then invalid_address at step 8", async () => {
  await using app = await createTestApp();
  const { project, apiKey } = await createTestProject(app);
  const body = { to: { address: "1".repeat(5000) }, amount: "1", idempotencyKey: "k1" };
  const first = await call(app.app, "/v1/tx/transfer-sol", { method: "POST", apiKey, json: body });
  await assertErrorCode(first, 409, "wallet_not_configured");
  await updateProject(app.kv, project.id, (p) => ({
    ...p,
    walletAddress: "11111111111111111111111111111112",
  }));
  for (const address of ["1".repeat(5000), "not an address", "0OIl"]) {
    const res = await call(app.app, "/v1/tx/transfer-sol", {
      method: "POST",
      apiKey,
      json: { ...body, to: { address } },
    });
    await assertErrorCode(res, 400, "invalid_address");
  }
});

Deno.test("strings that are not well-formed Unicode are invalid_request", async (t) => {
  await using app = await createTestApp();
  const { apiKey } = await createTestProject(app);
  // JSON escapes survive JSON.parse as lone surrogates.
  const lone = '"key\\ud800"';

  await t.step("an idempotency key with a lone surrogate", async () => {
    const res = await call(app.app, "/v1/tx/transfer-sol", {
      method: "POST",
      apiKey,
      headers: { "content-type": "application/json" },
      body: `{"to":{"userId":1},"amount":"1","idempotencyKey":${lone}}`,
    });
    const body = await assertErrorCode(res, 400, "invalid_request");
    assert.ok(body.error.message.includes("idempotencyKey"), body.error.message);
  });

  await t.step("a dashboard project name with a lone surrogate", async () => {
    const dev = await signInDeveloper(app.app);
    const res = await browse(app.app, "/dashboard/projects", {
      jar: dev.jar,
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: `{"name":"Game \\udfff","cluster":"devnet"}`,
    });
    await assertErrorCode(res, 400, "invalid_request");
  });
});

Deno.test("project creation takes a random slug suffix after a collision, so it never answers 500", async () => {
  await using app = await createTestApp();
  // Given every numbered variant of the slug is already taken (by deleted projects, say)
  const atomic = app.kv.atomic().set(projectSlugKey("crowded"), "someone");
  for (let n = 2; n <= 150; n++) atomic.set(projectSlugKey(`crowded-${n}`), "someone");
  await atomic.commit();
  const dev = await signInDeveloper(app.app);
  // When a developer creates a project with that name
  const res = await postJson(app.app, "/dashboard/projects", {
    name: "Crowded",
    cluster: "devnet",
  }, { jar: dev.jar });
  // Then it gets a project with a fresh slug
  assert.deepEqual(res.status, 201);
  const { slug } = await res.json();
  assert.ok(/^crowded-[a-z0-9]{6,}$/.test(slug), slug);
  assert.deepEqual((await app.kv.get(projectSlugKey(slug))).value !== "someone", true);
  // And the first project of a name still gets the plain slug
  const plain = await createProject(app.kv, {
    name: "Quiet",
    cluster: "devnet",
    createdBy: dev.address,
    now: app.clock.now(),
  });
  assert.deepEqual(plain.slug, "quiet");
});

Deno.test("GET /auth/idp/callback checks state before acting on error", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const jar = new CookieJar();
  const start = await browse(world.app, `/auth/idp/start?next=/link/${project.slug}`, { jar });
  assert.deepEqual(start.status, 302);
  // A forged error redirect without the right state is a state mismatch, not a provider denial.
  const res = await browse(world.app, "/auth/idp/callback?error=access_denied&state=forged", {
    jar,
  });
  assert.deepEqual(res.status, 302);
  assert.deepEqual(res.headers.get("location"), `/link/${project.slug}?error=oauth_state_mismatch`);
});

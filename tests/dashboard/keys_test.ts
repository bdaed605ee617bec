import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp, testConfig } from "../support/test_app.ts";
import { listApiKeys } from "../../kv/api_keys.ts";
import {
  createKeyAs,
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";

Deno.test("POST /dashboard/projects/:id/keys answers the plaintext once; the key works on /v1", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev, { name: "Keyed" });

  // When
  const res = await postJson(t.app, `/dashboard/projects/${project.id}/keys`, undefined, {
    jar: dev.jar,
  });

  // Then
  assert.deepEqual(res.status, 201);
  const created = await res.json();
  assert.ok(/^blk_live_[A-Za-z0-9_-]{43}$/.test(created.key), created.key);
  assert.deepEqual(created.preview, created.key.slice(0, 13));
  const v1 = await call(t.app, "/v1/project", { apiKey: created.key });
  assert.deepEqual(v1.status, 200);
  assert.deepEqual((await v1.json()).id, project.id);
  const page = await (await getPage(t.app, `/dashboard/projects/${project.id}/keys`, dev.jar))
    .text();
  assert.ok(page.includes(`${created.preview}…`), "listed by prefix");
  assert.ok(!page.includes(created.key), "the plaintext is never listed");
});

Deno.test("A key created by form is shown once, from an encrypted flash, never in the URL", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const other = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);

  // When
  const res = await postForm(t.app, `/dashboard/projects/${project.id}/keys`, {}, { jar: dev.jar });

  // Then
  assert.deepEqual(res.status, 303);
  assert.deepEqual(res.headers.get("location"), `/dashboard/projects/${project.id}/keys`);
  const flashCookie = dev.jar.get("__Host-svc_flash")!;
  assert.ok(
    flashCookie && !flashCookie.includes("blk_live_"),
    "the cookie does not carry it readably",
  );
  const flashLine = res.headers.getSetCookie().find((l) => l.startsWith("__Host-svc_flash="))!;
  assert.ok(
    /HttpOnly/.test(flashLine) && /Secure/.test(flashLine) && /Max-Age=120/.test(flashLine),
  );

  // And another developer's browser holding the same cookie sees nothing
  other.jar.set("__Host-svc_flash", flashCookie);
  const theirs = await (await getPage(t.app, "/dashboard", other.jar)).text();
  assert.ok(!theirs.includes("blk_live_"));

  const page = await (await getPage(t.app, `/dashboard/projects/${project.id}/keys`, dev.jar))
    .text();
  const shown = /data-testid="new-key-value">(blk_live_[A-Za-z0-9_-]{43})</.exec(page)?.[1];
  assert.ok(shown, "the new key is on the page");
  assert.deepEqual((await call(t.app, "/v1/project", { apiKey: shown })).status, 200);
  const again = await (await getPage(t.app, `/dashboard/projects/${project.id}/keys`, dev.jar))
    .text();
  assert.ok(!again.includes(shown), "shown only once");
});

Deno.test("A project has at most 10 active keys; revoking one frees a place", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const first = await createKeyAs(t.app, dev, project.id);
  for (let i = 1; i < 10; i++) await createKeyAs(t.app, dev, project.id);

  // When
  const eleventh = await postJson(t.app, `/dashboard/projects/${project.id}/keys`, undefined, {
    jar: dev.jar,
  });

  // Then
  await assertErrorCode(eleventh, 403, "key_limit_reached");
  const byForm = await postForm(t.app, `/dashboard/projects/${project.id}/keys`, {}, {
    jar: dev.jar,
  });
  assert.deepEqual(byForm.status, 303);
  const page = await (await getPage(t.app, byForm.headers.get("location")!, dev.jar)).text();
  assert.ok(page.includes("already has 10 active API keys"));
  const revoked = await postJson(
    t.app,
    `/dashboard/projects/${project.id}/keys/${first.id}/revoke`,
    undefined,
    { jar: dev.jar },
  );
  assert.deepEqual([revoked.status, await revoked.json()], [200, { ok: true }]);
  await createKeyAs(t.app, dev, project.id);
});

Deno.test("POST /dashboard/projects/:id/keys/:keyId/revoke", async (t) => {
  await using app = await createTestApp();
  const dev = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, dev);
  const otherProject = await createProjectAs(app.app, dev);
  const key = await createKeyAs(app.app, dev, project.id);
  const otherKey = await createKeyAs(app.app, dev, otherProject.id);
  const revoke = (projectId: string, keyId: string) =>
    postJson(app.app, `/dashboard/projects/${projectId}/keys/${keyId}/revoke`, undefined, {
      jar: dev.jar,
    });

  await t.step("the key stops working at once on this instance", async () => {
    assert.deepEqual((await call(app.app, "/v1/project", { apiKey: key.key })).status, 200);
    assert.deepEqual((await revoke(project.id, key.id)).status, 200);
    await assertErrorCode(
      await call(app.app, "/v1/project", { apiKey: key.key }),
      401,
      "unauthorized",
    );
  });
  await t.step("an already revoked key is key_not_found", async () => {
    await assertErrorCode(await revoke(project.id, key.id), 404, "key_not_found");
  });
  await t.step("an unknown key is key_not_found", async () => {
    await assertErrorCode(
      await revoke(project.id, "01ABCDEFGHJKMNPQRSTVWXYZ00"),
      404,
      "key_not_found",
    );
  });
  await t.step("another project's key is key_not_found and keeps working", async () => {
    await assertErrorCode(await revoke(project.id, otherKey.id), 404, "key_not_found");
    assert.deepEqual((await call(app.app, "/v1/project", { apiKey: otherKey.key })).status, 200);
  });
  await t.step("a form post shows the message on the keys page", async () => {
    const res = await postForm(
      app.app,
      `/dashboard/projects/${project.id}/keys/${key.id}/revoke`,
      {},
      {
        jar: dev.jar,
      },
    );
    assert.deepEqual(res.headers.get("location"), `/dashboard/projects/${project.id}/keys`);
    const page = await (await getPage(app.app, res.headers.get("location")!, dev.jar)).text();
    assert.ok(page.includes("No active API key with this id in the project"));
  });
});

Deno.test("Key creations are capped per developer, revoked keys included", async () => {
  await using t = await createTestApp({
    config: { abuseLimits: { ...testConfig().abuseLimits, key_create: 3 } },
  });
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const other = await createProjectAs(t.app, dev);
  // Given: three keys created this hour, across projects, one of them revoked since
  const first = await createKeyAs(t.app, dev, project.id);
  await createKeyAs(t.app, dev, other.id);
  await createKeyAs(t.app, dev, project.id);
  const revoke = `/dashboard/projects/${project.id}/keys/${first.id}/revoke`;
  assert.equal((await postJson(t.app, revoke, undefined, { jar: dev.jar })).status, 200);

  // When: a fourth is asked for
  const refused = await postJson(t.app, `/dashboard/projects/${other.id}/keys`, undefined, {
    jar: dev.jar,
  });

  // Then: refused, nothing created; another developer is not affected, and the next hour has room
  const body = await assertErrorCode(refused, 429, "rate_limited");
  assert.ok(body.error.message.includes("3 new API keys per hour"), body.error.message);
  assert.equal((await listApiKeys(t.kv, other.id, t.clock.now())).length, 1);
  const someoneElse = await signInDeveloper(t.app);
  await createKeyAs(t.app, someoneElse, (await createProjectAs(t.app, someoneElse)).id);
  t.clock.advance(3_600_000);
  await createKeyAs(t.app, dev, other.id);
});

Deno.test("A revoked key is deleted 30 days after its revocation", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const key = await createKeyAs(t.app, dev, project.id);
  const revoke = `/dashboard/projects/${project.id}/keys/${key.id}/revoke`;
  assert.equal((await postJson(t.app, revoke, undefined, { jar: dev.jar })).status, 200);
  const listed = async () => {
    // Sessions last 12 hours: sign in again as the same developer.
    const again = await signInDeveloper(t.app, dev.wallet);
    const page = await getPage(t.app, `/dashboard/projects/${project.id}/keys`, again.jar);
    return (await page.text()).includes(key.key.slice(0, "blk_live_".length + 4));
  };
  assert.ok(await listed(), "listed as revoked");

  // When: 30 days pass, less a minute: still on the page
  t.clock.advance(30 * 24 * 3_600_000 - 60_000);
  assert.ok(await listed(), "kept 30 days");

  // Then: a minute later it is gone from the page and the store's list; it never works again
  t.clock.advance(60_000);
  assert.equal(await listed(), false);
  assert.deepEqual(await listApiKeys(t.kv, project.id, t.clock.now()), []);
  await assertErrorCode(await call(t.app, "/v1/project", { apiKey: key.key }), 401, "unauthorized");
});

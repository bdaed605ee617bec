import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { call, createTestApp } from "../support/test_app.ts";
import {
  createKeyAs,
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";
import { browse } from "../support/sign_in.ts";

Deno.test("POST /dashboard/projects creates a project with a unique slug and a fixed cluster", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);

  // When
  const res = await postJson(t.app, "/dashboard/projects", {
    name: "Space Miners!",
    cluster: "mainnet",
  }, { jar: dev.jar });
  const twin = await createProjectAs(t.app, dev, { name: "Space  miners" });

  // Then
  assert.deepEqual(res.status, 201);
  const body = await res.json();
  assert.deepEqual(
    { name: body.name, slug: body.slug, cluster: body.cluster, walletAddress: body.walletAddress },
    { name: "Space Miners!", slug: "space-miners", cluster: "mainnet", walletAddress: null },
  );
  assert.deepEqual(body.linkUrl, "http://localhost:8000/link/space-miners");
  assert.ok(/^space-miners-[a-z0-9]{6}$/.test(twin.slug), twin.slug);
  const key = await createKeyAs(t.app, dev, body.id);
  const project = await (await call(t.app, "/v1/project", { apiKey: key.key })).json();
  assert.deepEqual(project.cluster, "mainnet");
  const list = await (await getPage(t.app, "/dashboard", dev.jar)).text();
  assert.ok(list.includes("Space Miners!") && list.includes(`/link/${twin.slug}`));
});

Deno.test("POST /dashboard/projects answers invalid_settings naming each field", async (t) => {
  await using app = await createTestApp();
  const dev = await signInDeveloper(app.app);

  await t.step("empty name and unknown cluster", async () => {
    const res = await postJson(app.app, "/dashboard/projects", { name: "  ", cluster: "testnet" }, {
      jar: dev.jar,
    });
    const { error } = await assertErrorCode(res, 400, "invalid_settings");
    assert.deepEqual(error.message, "name: must not be empty; cluster: must be devnet or mainnet");
  });
  await t.step("name too long, cluster missing", async () => {
    const res = await postJson(app.app, "/dashboard/projects", { name: "x".repeat(61) }, {
      jar: dev.jar,
    });
    const { error } = await assertErrorCode(res, 400, "invalid_settings");
    assert.deepEqual(
      error.message,
      "name: must be at most 60 characters; cluster: must be devnet or mainnet",
    );
  });
  for (
    const [name, problem] of [
      ["..", "must not be . or .."],
      [".", "must not be . or .."],
      ["Sky\u202Eelbmuh", "must not contain control or format characters"],
      ["Sky\u200BRacers", "must not contain control or format characters"],
      ["Sky\u0007Racers", "must not contain control or format characters"],
    ]
  ) {
    await t.step(`name ${JSON.stringify(name)}`, async () => {
      const res = await postJson(app.app, "/dashboard/projects", { name, cluster: "devnet" }, {
        jar: dev.jar,
      });
      const { error } = await assertErrorCode(res, 400, "invalid_settings");
      assert.ok(error.message.startsWith(`name: ${problem}`), error.message);
    });
  }
  await t.step("not JSON", async () => {
    const res = await browse(app.app, "/dashboard/projects", {
      method: "POST",
      jar: dev.jar,
      body: "{nope",
      headers: { "content-type": "application/json", accept: "application/json" },
    });
    await assertErrorCode(res, 400, "invalid_json");
  });
  await t.step("a JSON array", async () => {
    const res = await postJson(app.app, "/dashboard/projects", ["name"], { jar: dev.jar });
    await assertErrorCode(res, 400, "invalid_request");
  });
  assert.deepEqual(
    (await (await getPage(app.app, "/dashboard", dev.jar)).text()).includes(
      'data-testid="no-projects"',
    ),
    true,
  );
});

Deno.test("A developer has at most 5 projects; deleting one frees a place", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const other = await signInDeveloper(t.app);
  const first = await createProjectAs(t.app, dev);
  for (let i = 1; i < 5; i++) await createProjectAs(t.app, dev);

  // When
  const sixth = await postJson(t.app, "/dashboard/projects", { name: "Sixth", cluster: "devnet" }, {
    jar: dev.jar,
  });

  // Then
  await assertErrorCode(sixth, 403, "project_limit_reached");
  await createProjectAs(t.app, other, { name: "Not counted against the first developer" });
  const deleted = await postJson(t.app, `/dashboard/projects/${first.id}/delete`, {
    name: first.name,
  }, { jar: dev.jar });
  assert.deepEqual(deleted.status, 200);
  assert.deepEqual(await deleted.json(), { ok: true });
  await createProjectAs(t.app, dev, { name: "Sixth" });
});

Deno.test("Creating a project by form redirects to it and shows the result; errors come back as messages", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);

  // When
  const res = await postForm(t.app, "/dashboard/projects", {
    name: "Forest Run",
    cluster: "devnet",
  }, {
    jar: dev.jar,
  });

  // Then
  assert.deepEqual(res.status, 303);
  const location = res.headers.get("location")!;
  assert.ok(/^\/dashboard\/projects\/[0-9A-Z]{26}$/.test(location), location);
  const page = await (await getPage(t.app, location, dev.jar)).text();
  assert.ok(page.includes("Project Forest Run created on devnet"));
  assert.ok(page.includes("http://localhost:8000/link/forest-run"));
  const again = await (await getPage(t.app, location, dev.jar)).text();
  assert.ok(!again.includes("Project Forest Run created"), "the message is shown once");

  // When the form is refused
  const bad = await postForm(t.app, "/dashboard/projects", { name: "", cluster: "devnet" }, {
    jar: dev.jar,
  });
  assert.deepEqual([bad.status, bad.headers.get("location")], [303, "/dashboard"]);
  const list = await (await getPage(t.app, "/dashboard", dev.jar)).text();
  assert.ok(list.includes("Name: must not be empty"));
  assert.ok(!list.includes("invalid_settings"), "the page shows the message, not the code");
});

Deno.test("Deleting a project stops its keys and turns its linking page into the no-game page", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev, { name: "Gone Soon" });
  const key = await createKeyAs(t.app, dev, project.id);
  assert.deepEqual((await call(t.app, "/v1/project", { apiKey: key.key })).status, 200);

  // When the deletion is asked for with another name, nothing is deleted
  const misnamed = await postJson(t.app, `/dashboard/projects/${project.id}/delete`, {
    name: "Gone soon",
  }, { jar: dev.jar });
  const refused = await assertErrorCode(misnamed, 400, "invalid_settings");
  assert.match(refused.error.message, /type the project's name, Gone Soon, to delete it/);
  assert.deepEqual((await call(t.app, "/v1/project", { apiKey: key.key })).status, 200);

  // When it is asked for with the project's name
  const res = await postForm(t.app, `/dashboard/projects/${project.id}/delete`, {
    name: "Gone Soon",
  }, { jar: dev.jar });

  // Then
  assert.deepEqual([res.status, res.headers.get("location")], [303, "/dashboard"]);
  await assertErrorCode(await call(t.app, "/v1/project", { apiKey: key.key }), 401, "unauthorized");
  const linkPage = await browse(t.app, "/link/gone-soon");
  assert.deepEqual(linkPage.status, 404);
  assert.ok((await linkPage.text()).includes("No game uses this link"));
  const list = await (await getPage(t.app, "/dashboard", dev.jar)).text();
  assert.ok(list.includes("Project Gone Soon deleted") && !list.includes("/link/gone-soon"));
  assert.deepEqual(
    (await getPage(t.app, `/dashboard/projects/${project.id}`, dev.jar)).status,
    404,
  );
  const again = await postJson(t.app, `/dashboard/projects/${project.id}/delete`, {
    name: "Gone Soon",
  }, { jar: dev.jar });
  await assertErrorCode(again, 404, "project_not_found");
  const recreated = await createProjectAs(t.app, dev, { name: "Gone Soon" });
  assert.ok(
    /^gone-soon-[a-z0-9]{6}$/.test(recreated.slug),
    `a deleted project's slug is never reused: ${recreated.slug}`,
  );
});

Deno.test("A deleted project's key stops on another instance within 30 s", async () => {
  // Given two instances on one store, the second having used the key (so it caches it)
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using a = await createTestApp({ kvPath: path });
  await using b = await createTestApp({ kvPath: path, clock: a.clock });
  const dev = await signInDeveloper(a.app);
  const project = await createProjectAs(a.app, dev);
  const key = await createKeyAs(a.app, dev, project.id);
  assert.deepEqual((await call(b.app, "/v1/project", { apiKey: key.key })).status, 200);

  // When
  await postJson(a.app, `/dashboard/projects/${project.id}/delete`, { name: project.name }, {
    jar: dev.jar,
  });
  a.clock.advance(30_000);

  // Then
  await assertErrorCode(await call(b.app, "/v1/project", { apiKey: key.key }), 401, "unauthorized");
  await Deno.remove(path).catch(() => {});
});

Deno.test("Every page of a project renders for its owner, with the page security headers", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev, { name: "Tabbed" });
  const tabs = [
    "",
    "/keys",
    "/settings",
    "/policy",
    "/watches",
    "/transactions",
    "/players",
    "/events",
    "/delete",
  ];
  for (const tab of tabs) {
    const res = await getPage(t.app, `/dashboard/projects/${project.id}${tab}`, dev.jar);
    assert.deepEqual(res.status, 200, tab);
    assert.deepEqual(
      res.headers.get("content-security-policy"),
      "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; script-src 'self'; object-src 'none'",
    );
    assert.deepEqual(res.headers.get("cache-control"), "no-store");
    const html = await res.text();
    assert.ok(
      html.includes("Tabbed") && /<a [^>]*aria-current="page"/.test(html) === (tab !== "/delete"),
      tab,
    );
  }
  const home = await getPage(t.app, "/");
  assert.deepEqual(home.status, 200);
  assert.ok((await home.text()).includes("Sign in to the dashboard"));
});

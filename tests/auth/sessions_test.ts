// Sessions are recorded server-side: a copied cookie stops working when its session ends.
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { createTestApp } from "../support/test_app.ts";
import { browse, createLinkProject, signInPlayer, startLinkWorld } from "../support/sign_in.ts";
import { getPage, postForm, postJson, signInDeveloper } from "../support/dashboard.ts";

Deno.test("POST /auth/logout ends the developer session for every copy of the cookie", async () => {
  await using t = await createTestApp();
  // Given a developer's session cookie was copied
  const dev = await signInDeveloper(t.app);
  const copy = dev.jar.clone();
  assert.deepEqual((await getPage(t.app, "/dashboard", copy)).status, 200);
  // When the developer signs out
  const out = await browse(t.app, "/auth/logout", { jar: dev.jar, method: "POST" });
  assert.deepEqual(out.status, 200);
  // Then the copy no longer opens the dashboard or runs an action
  const page = await getPage(t.app, "/dashboard", copy);
  assert.deepEqual(page.status, 303);
  assert.ok(page.headers.get("location")!.startsWith("/dashboard/sign-in"));
  const action = await postJson(t.app, "/dashboard/projects", { name: "X", cluster: "devnet" }, {
    jar: copy,
  });
  await assertErrorCode(action, 401, "not_signed_in");
});

Deno.test("POST /auth/logout ends the player session for every copy of the cookie", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { jar } = await signInPlayer(world, project, 1001);
  const copy = jar.clone();
  const me = async () =>
    (await (await browse(world.app, `/api/link/${project.slug}/me`, {
      jar: copy,
    })).json()).user;
  assert.deepEqual((await me())?.id, 1001);
  await browse(world.app, "/auth/logout", { jar, method: "POST" });
  assert.deepEqual(await me(), null);
  const challenge = await browse(world.app, `/api/link/${project.slug}/challenge`, {
    jar: copy,
    json: { address: "11111111111111111111111111111112" },
  });
  await assertErrorCode(challenge, 401, "not_signed_in");
});

Deno.test("Sign out everywhere ends every session of the developer, and only theirs", async () => {
  await using t = await createTestApp();
  const laptop = await signInDeveloper(t.app);
  const phone = await signInDeveloper(t.app, laptop.wallet);
  const other = await signInDeveloper(t.app);
  const page = await (await getPage(t.app, "/dashboard", laptop.jar)).text();
  assert.ok(
    page.includes('action="/dashboard/sign-out-everywhere"'),
    "the button is on every page",
  );
  const res = await postForm(t.app, "/dashboard/sign-out-everywhere", {}, { jar: laptop.jar });
  assert.deepEqual(res.status, 303);
  assert.deepEqual(res.headers.get("location"), "/");
  assert.deepEqual((await getPage(t.app, "/dashboard", phone.jar)).status, 303);
  assert.deepEqual((await getPage(t.app, "/dashboard", laptop.jar)).status, 303);
  assert.deepEqual((await getPage(t.app, "/dashboard", other.jar)).status, 200);
});

Deno.test("POST /dashboard/sign-out-everywhere needs our origin and a session", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const foreign = await postJson(t.app, "/dashboard/sign-out-everywhere", undefined, {
    jar: dev.jar,
    origin: "https://evil.example",
  });
  await assertErrorCode(foreign, 403, "bad_origin");
  assert.deepEqual((await getPage(t.app, "/dashboard", dev.jar)).status, 200);
  const anonymous = await postJson(t.app, "/dashboard/sign-out-everywhere", undefined);
  await assertErrorCode(anonymous, 401, "not_signed_in");
  const ok = await postJson(t.app, "/dashboard/sign-out-everywhere", undefined, { jar: dev.jar });
  assert.deepEqual(await ok.json(), { ok: true, ended: 1 });
});

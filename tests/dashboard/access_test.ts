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
import { browse, CookieJar, createTestWallet } from "../support/sign_in.ts";
import { getPolicy } from "../../kv/policy.ts";
import { listWatchesByProject } from "../../kv/watches.ts";
import { listApiKeys } from "../../kv/api_keys.ts";
import { ulid } from "../../core/ids.ts";
import { emptyPolicy } from "../../kv/policy.ts";
import { listMembers, memberKey } from "../../kv/members.ts";

const WATCH_ADDRESS = "Vote111111111111111111111111111111111111111";

/** Every dashboard action with a body that would succeed for the project's owner. */
function actions(projectId: string, keyId: string): Array<{ path: string; body?: unknown }> {
  const base = `/dashboard/projects/${projectId}`;
  return [
    { path: "/dashboard/projects", body: { name: "New", cluster: "devnet" } },
    { path: `${base}/keys` },
    { path: `${base}/keys/${keyId}/revoke` },
    { path: `${base}/wallet` },
    { path: `${base}/settings`, body: { name: "Renamed" } },
    { path: `${base}/policy`, body: { maxSolPerTransfer: "1" } },
    { path: `${base}/watches`, body: { name: "vault", address: WATCH_ADDRESS } },
    { path: `${base}/watches/${ulid()}/delete` },
    { path: `${base}/ping` },
    { path: `${base}/members`, body: { address: WATCH_ADDRESS, role: "viewer" } },
    { path: `${base}/members/${WATCH_ADDRESS}/role`, body: { role: "admin" } },
    { path: `${base}/members/${WATCH_ADDRESS}/remove` },
    { path: `${base}/invitations/${WATCH_ADDRESS}/revoke` },
    { path: `${base}/transfer`, body: { address: WATCH_ADDRESS } },
    { path: `${base}/leave` },
    { path: `${base}/delete` },
  ];
}

/** The same, with the invitee's answer, which needs a session but no membership. */
function allActions(projectId: string, keyId: string): Array<{ path: string; body?: unknown }> {
  return [
    ...actions(projectId, keyId),
    { path: `/dashboard/invitations/${projectId}`, body: { accept: true } },
  ];
}

Deno.test("Every dashboard action refuses a post without our Origin first (bad_origin), session or not", async (t) => {
  await using app = await createTestApp();
  const dev = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, dev);
  const key = await createKeyAs(app.app, dev, project.id);

  for (const action of allActions(project.id, key.id)) {
    await t.step(action.path, async () => {
      for (const origin of [null, "https://evil.example", "http://localhost:8001"]) {
        for (const jar of [dev.jar, new CookieJar()]) {
          const json = await postJson(app.app, action.path, action.body, { jar, origin });
          await assertErrorCode(json, 403, "bad_origin");
          const form = await postForm(app.app, action.path, {}, { jar, origin });
          await assertErrorCode(form, 403, "bad_origin");
        }
      }
    });
  }
  // Nothing was changed by any of them.
  assert.deepEqual((await call(app.app, "/v1/project", { apiKey: key.key })).status, 200);
  const v1 = await (await call(app.app, "/v1/project", { apiKey: key.key })).json();
  assert.deepEqual(v1.name, project.name);
});

Deno.test("Without a developer session actions answer 401 not_signed_in, or send a browser to sign in", async (t) => {
  await using app = await createTestApp();
  const dev = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, dev);
  const key = await createKeyAs(app.app, dev, project.id);

  for (const action of allActions(project.id, key.id)) {
    await t.step(action.path, async () => {
      const json = await postJson(app.app, action.path, action.body, { jar: new CookieJar() });
      await assertErrorCode(json, 401, "not_signed_in");
      const form = await postForm(app.app, action.path, {}, { jar: new CookieJar() });
      assert.deepEqual(form.status, 303);
      assert.ok(form.headers.get("location")!.startsWith("/dashboard/sign-in"));
    });
  }
  assert.deepEqual((await call(app.app, "/v1/project", { apiKey: key.key })).status, 200);
});

Deno.test("Dashboard pages send a visitor without a session to sign in, and back afterwards", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);

  // When
  const page = `/dashboard/projects/${project.id}/keys`;
  const res = await getPage(t.app, page, new CookieJar());

  // Then
  assert.deepEqual(res.status, 303);
  const location = res.headers.get("location")!;
  assert.deepEqual(location, `/dashboard/sign-in?next=${encodeURIComponent(page)}`);
  const signIn = await getPage(t.app, location, new CookieJar());
  assert.deepEqual(signIn.status, 200);
  const html = await signIn.text();
  assert.ok(html.includes(`"next":"${page}"`), "the island is told where to land");
  assert.ok(html.includes("Sign in to the Blocklink dashboard"));
  assert.deepEqual(signIn.headers.get("x-frame-options"), "DENY");

  // And the sign-in routes land there
  const jar = new CookieJar();
  const wallet = createTestWallet();
  const challenge = await browse(t.app, "/auth/wallet/challenge", {
    jar,
    json: { address: wallet.address, next: page },
  });
  const { message } = await challenge.json();
  const verify = await browse(t.app, "/auth/wallet/verify", {
    jar,
    json: { signature: wallet.sign(message) },
  });
  assert.deepEqual(await verify.json(), { next: page });

  // And a signed-in developer on the sign-in page goes straight on
  const again = await getPage(t.app, location, dev.jar);
  assert.deepEqual([again.status, again.headers.get("location")], [303, page]);
});

Deno.test("A developer never sees or changes another developer's project", async (t) => {
  await using app = await createTestApp({ config: { walletProvider: "managed" } });
  const owner = await signInDeveloper(app.app);
  const intruder = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, owner, { name: "Mine" });
  const key = await createKeyAs(app.app, owner, project.id);
  await createProjectAs(app.app, intruder, { name: "Theirs" });

  await t.step("every action answers project_not_found", async () => {
    for (const action of actions(project.id, key.id).slice(1)) {
      const res = await postJson(app.app, action.path, action.body, { jar: intruder.jar });
      await assertErrorCode(res, 404, "project_not_found");
      const form = await postForm(app.app, action.path, {}, { jar: intruder.jar });
      assert.deepEqual([form.status, form.headers.get("location")], [303, "/dashboard"]);
    }
  });
  await t.step("every page answers the not-found page", async () => {
    for (
      const tab of [
        "",
        "/keys",
        "/settings",
        "/policy",
        "/watches",
        "/transactions",
        "/players",
        "/events",
        "/team",
        "/audit",
        "/delete",
      ]
    ) {
      const res = await getPage(app.app, `/dashboard/projects/${project.id}${tab}`, intruder.jar);
      assert.deepEqual(res.status, 404, tab);
      const html = await res.text();
      assert.ok(html.includes("Project not found") && !html.includes("Mine"), tab);
    }
  });
  await t.step("their list does not show it", async () => {
    const list = await (await getPage(app.app, "/dashboard", intruder.jar)).text();
    assert.ok(list.includes("Theirs") && !list.includes("Mine"));
  });
  await t.step("the owner's project is untouched", async () => {
    const v1 = await (await call(app.app, "/v1/project", { apiKey: key.key })).json();
    assert.deepEqual({ name: v1.name, walletAddress: v1.walletAddress, events: v1.events }, {
      name: "Mine",
      walletAddress: null,
      events: false,
    });
    assert.deepEqual(await getPolicy(app.kv, project.id), emptyPolicy());
    assert.deepEqual(await listWatchesByProject(app.kv, project.id), []);
    assert.deepEqual(
      (await listApiKeys(app.kv, project.id, app.clock.now())).filter((k) => k.revokedAt).length,
      0,
    );
  });
});

Deno.test("POST /auth/logout from the dashboard lands on the landing page, signed out", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);

  // When
  const res = await postForm(t.app, "/auth/logout", {}, { jar: dev.jar });

  // Then
  assert.deepEqual([res.status, res.headers.get("location")], [303, "/"]);
  const home = await getPage(t.app, "/", dev.jar);
  assert.deepEqual(home.status, 200);
  const html = await home.text();
  assert.ok(html.includes("Sign in to the dashboard") && html.includes("API reference"));
  assert.deepEqual((await getPage(t.app, "/dashboard", dev.jar)).status, 303);
});

Deno.test("A script may send JSON without an Accept header and still gets JSON", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const res = await browse(t.app, "/dashboard/projects", {
    jar: dev.jar,
    json: { name: "Scripted", cluster: "devnet" },
  });
  assert.deepEqual(res.status, 201);
  assert.deepEqual((await res.json()).slug, "scripted");
});

Deno.test("The sandbox key is offered on a local playground only", async () => {
  await using local = await createTestApp();
  const page = await (await getPage(local.app, "/dashboard/sign-in")).text();
  assert.ok(page.includes('"sandbox":true'));
  await using deployed = await createTestApp({ config: { baseUrl: "https://blocklink.example" } });
  const res = await deployed.app.request("https://blocklink.example/dashboard/sign-in");
  assert.ok((await res.text()).includes('"sandbox":false'));
});

Deno.test("GET /dashboard?error=oauth_state_mismatch explains the lost Roblox sign-in", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const signedIn = await (await getPage(t.app, "/dashboard?error=oauth_state_mismatch", dev.jar))
    .text();
  assert.ok(signedIn.includes("A Roblox sign-in could not be finished"));

  const visitor = await getPage(t.app, "/dashboard?error=oauth_state_mismatch", new CookieJar());
  const location = visitor.headers.get("location")!;
  assert.deepEqual(
    location,
    `/dashboard/sign-in?next=${encodeURIComponent("/dashboard?error=oauth_state_mismatch")}`,
  );
  const page = await (await getPage(t.app, location, new CookieJar())).text();
  assert.ok(page.includes("A Roblox sign-in could not be finished"));
});

Deno.test("GET /dashboard?error= with an inherited name (constructor, toString, __proto__) shows no message box", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  for (const code of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf"]) {
    for (
      const [path, jar] of [["/dashboard", dev.jar], ["/dashboard/sign-in", undefined]] as const
    ) {
      const res = await getPage(t.app, `${path}?error=${code}`, jar);
      assert.deepEqual(res.status, 200, `${path}?error=${code}`);
      const html = await res.text();
      assert.ok(!/class="notice error"/.test(html), `${path}?error=${code} shows a box`);
    }
  }
});

Deno.test("A project an instance of the previous version left without members opens for its creator, made its owner then; nobody else gains it", async () => {
  await using app = await createTestApp();
  const creator = await signInDeveloper(app.app);
  const outsider = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, creator, { name: "Before teams" });
  // Given: the project as the previous version writes it (on the creator's list, no member),
  // after the migration and beyond the minute sweep's reach.
  await app.kv.delete(memberKey(project.id, creator.address));

  // When: someone else asks for it, then its creator lists their projects and opens it.
  const refused = await getPage(app.app, `/dashboard/projects/${project.id}`, outsider.jar);
  const list = await getPage(app.app, "/dashboard", creator.jar);
  const page = await getPage(app.app, `/dashboard/projects/${project.id}`, creator.jar);

  // Then: the other developer got the 404 of an unknown project and no place in the team; the
  // creator sees the project listed and opened, as its owner, with the owner's rights.
  assert.equal(refused.status, 404);
  await refused.body?.cancel();
  assert.equal(list.status, 200);
  assert.match(await list.text(), /Before teams/);
  assert.equal(page.status, 200);
  await page.body?.cancel();
  const members = await listMembers(app.kv, project.id);
  assert.deepEqual(members.map((m) => [m.address, m.role]), [[creator.address, "owner"]]);
  const invited = await postJson(app.app, `/dashboard/projects/${project.id}/members`, {
    address: createTestWallet().address,
    role: "viewer",
  }, { jar: creator.jar });
  assert.equal(invited.status, 201, await invited.text());
});

import assert from "node:assert/strict";
import {
  browse,
  CookieJar,
  createLinkProject,
  type LinkWorld,
  signInPlayer,
  startLinkWorld,
} from "../support/sign_in.ts";
import { TEST_BASE_URL } from "../support/test_app.ts";
import { deleteProject, updateProject } from "../../kv/projects.ts";
import { encryptOauthClientSecret } from "../../lib/auth/oauth_app.ts";

const OAUTH = "__Host-svc_oauth";
const SESSION = "__Host-svc_session";

async function start(world: LinkWorld, next: string | null, jar = new CookieJar()) {
  const query = next === null ? "" : `?next=${encodeURIComponent(next)}`;
  const res = await browse(world.app, `/auth/idp/start${query}`, { jar });
  assert.deepEqual(res.status, 302);
  return { res, location: res.headers.get("location")!, jar };
}

/** Starts a sign-in and plays the stand-in's consent; returns the callback path and the jar. */
async function consent(world: LinkWorld, slug: string, userId = 1001) {
  const { location, jar } = await start(world, `/link/${slug}`);
  const back = new URL(await world.idp.authorizeAutomatically(location, userId));
  return { callback: `${back.pathname}${back.search}`, jar, back };
}

async function callback(world: LinkWorld, path: string, jar: CookieJar) {
  const res = await browse(world.app, path, { jar });
  assert.deepEqual(res.status, 302);
  return res.headers.get("location")!;
}

Deno.test("GET /auth/idp/start redirects to the provider with PKCE S256 and a signed 10-minute flow cookie", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { res, location } = await start(world, `/link/${project.slug}`);

  const url = new URL(location);
  assert.deepEqual(`${url.origin}${url.pathname}`, `${world.idp.idpUrl}/v1/authorize`);
  const q = Object.fromEntries(url.searchParams);
  assert.deepEqual(q.client_id, project.settings.oauthClientId);
  assert.deepEqual(q.redirect_uri, `${TEST_BASE_URL}/auth/idp/callback`);
  assert.deepEqual(q.scope, "openid profile");
  assert.deepEqual(q.response_type, "code");
  assert.deepEqual(q.code_challenge_method, "S256");
  assert.match(q.code_challenge ?? "", /^[A-Za-z0-9_-]{43}$/);
  assert.ok((q.state ?? "").length >= 22);
  const cookie = res.headers.getSetCookie().find((line) => line.startsWith(`${OAUTH}=`))!;
  assert.ok(cookie, "flow cookie set");
  for (const attr of ["Max-Age=600", "Path=/", "HttpOnly", "Secure", "SameSite=Lax"]) {
    assert.ok(cookie.includes(attr), `${attr} in ${cookie}`);
  }
  assert.ok(!/Domain=/i.test(cookie));
  // The verifier stays in the signed cookie; the challenge alone is public.
  const verifier = cookie.split(";")[0]?.split("=")[1];
  assert.ok(verifier);
  assert.ok(!location.includes(verifier));

  // A second start gives a fresh state and challenge.
  const again = new URL((await start(world, `/link/${project.slug}`)).location);
  assert.ok(again.searchParams.get("state") !== q.state);
  assert.ok(again.searchParams.get("code_challenge") !== q.code_challenge);
});

Deno.test("GET /auth/idp/start sends anything but a linking or dashboard path to /dashboard", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const refused = [
    null,
    "",
    "https://evil.example/link/x",
    "//evil.example",
    "//evil.example/link/x",
    "/\\evil.example",
    "\\\\evil.example",
    "/%2F%2Fevil.example",
    "/%5Cevil.example",
    "/link/%2e%2e/evil",
    `/link/${project.slug}/../../evil`,
    "/link/",
    "/link/Upper",
    `/link/${project.slug}?next=//evil`,
    `/link/${project.slug}/`,
    "javascript:alert(1)",
    "/dashboard/../evil",
    "/dashboard/%2F%2Fevil",
    "/dashboardx",
    "/dashboard//evil.example",
    "/evil",
    " /dashboard",
    "/dashboard\r\nSet-Cookie: x=1",
  ];
  for (const next of refused) {
    await t.step(JSON.stringify(next), async () => {
      const { location, res } = await start(world, next);
      assert.deepEqual(location, "/dashboard");
      assert.deepEqual(res.headers.getSetCookie().length, 0);
    });
  }
  await t.step("raw encoded tricks in the query", async () => {
    for (const raw of ["%2F%2Fevil.example", "%252F%252Fevil.example", "/%09/evil.example"]) {
      const res = await browse(world.app, `/auth/idp/start?next=${raw}`);
      assert.deepEqual(res.headers.get("location"), "/dashboard");
    }
  });
});

Deno.test("GET /auth/idp/start: dashboard paths, unknown games and games without an OAuth app redirect without signing in", async (t) => {
  await using world = await startLinkWorld();
  const ready = await createLinkProject(world);
  const bare = await createLinkProject(world, { oauth: false });
  const gone = await createLinkProject(world);
  await deleteProject(world.t.kv, gone.id, world.clock.now());

  await t.step("dashboard path", async () => {
    for (const next of ["/dashboard", "/dashboard/projects/01ABC", "/dashboard?tab=keys"]) {
      assert.deepEqual((await start(world, next)).location, next);
    }
  });
  await t.step("no active project has the slug", async () => {
    assert.deepEqual((await start(world, "/link/no-such-game")).location, "/link/no-such-game");
    assert.deepEqual((await start(world, `/link/${gone.slug}`)).location, `/link/${gone.slug}`);
  });
  await t.step("no OAuth app saved, or only half of it", async () => {
    assert.deepEqual(
      (await start(world, `/link/${bare.slug}`)).location,
      `/link/${bare.slug}?error=oauth_not_configured`,
    );
    await updateProject(world.t.kv, ready.id, (p) => ({
      ...p,
      settings: { ...p.settings, oauthClientSecretEnc: null },
    }));
    assert.deepEqual(
      (await start(world, `/link/${ready.slug}`)).location,
      `/link/${ready.slug}?error=oauth_not_configured`,
    );
  });
});

Deno.test("GET /auth/idp/callback signs the player in for one hour on that project and revokes the token", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { callback: path, jar } = await consent(world, project.slug, 1002);
  const res = await browse(world.app, path, { jar });

  assert.deepEqual(res.status, 302);
  assert.deepEqual(res.headers.get("location"), `/link/${project.slug}`);
  const lines = res.headers.getSetCookie();
  const session = lines.find((line) => line.startsWith(`${SESSION}=`))!;
  for (const attr of ["Max-Age=3600", "Path=/", "HttpOnly", "Secure", "SameSite=Lax"]) {
    assert.ok(session.includes(attr), `${attr} in ${session}`);
  }
  assert.ok(lines.some((line) => line.startsWith(`${OAUTH}=;`) && line.includes("Max-Age=0")));
  assert.deepEqual(jar.get(OAUTH), undefined);

  const me = await browse(world.app, `/api/link/${project.slug}/me`, { jar });
  assert.deepEqual(await me.json(), {
    user: {
      id: 1002,
      name: "PixelPilot",
      displayName: "Pixel Pilot",
      avatar: `${world.idp.url}/_avatars/1002.svg`,
    },
    link: null,
  });
  const revoked = world.idp.revoked();
  assert.deepEqual(revoked.length, 1);
  const [token] = revoked;
  assert.ok(token);
  assert.deepEqual(token.kind, "refresh_token");
  assert.deepEqual(token.userId, 1002);
  assert.deepEqual(token.clientId, project.settings.oauthClientId);
});

Deno.test("GET /auth/idp/callback without a valid flow cookie redirects to /dashboard?error=oauth_state_mismatch", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const mismatch = "/dashboard?error=oauth_state_mismatch";

  await t.step("no cookie", async () => {
    const { callback: path } = await consent(world, project.slug);
    assert.deepEqual(await callback(world, path, new CookieJar()), mismatch);
  });
  await t.step("tampered cookie", async () => {
    const { callback: path, jar } = await consent(world, project.slug);
    const [body, mac] = jar.get(OAUTH)!.split(".");
    assert.ok(body);
    const flow = JSON.parse(atob(body.replaceAll("-", "+").replaceAll("_", "/")));
    const forged = btoa(JSON.stringify({ ...flow, next: "/link/other" }))
      .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
    jar.set(OAUTH, `${forged}.${mac}`);
    assert.deepEqual(await callback(world, path, jar), mismatch);
  });
  await t.step("a cookie signed for another purpose (the session's)", async () => {
    const { jar } = await signInPlayer(world, project, 1001);
    const { callback: path } = await consent(world, project.slug);
    jar.set(OAUTH, jar.get(SESSION)!);
    assert.deepEqual(await callback(world, path, jar), mismatch);
  });
  await t.step("older than 10 minutes", async () => {
    const { callback: path, jar } = await consent(world, project.slug);
    world.clock.advance(10 * 60_000);
    assert.deepEqual(await callback(world, path, jar), mismatch);
  });
  await t.step("already used (replayed callback)", async () => {
    const { callback: path, jar } = await consent(world, project.slug);
    const saved = jar.clone();
    assert.deepEqual(await callback(world, path, jar), `/link/${project.slug}`);
    assert.deepEqual(await callback(world, path, jar), mismatch);
    // Even with the old cookie value, the provider's code works only once.
    assert.deepEqual(
      await callback(world, path, saved),
      `/link/${project.slug}?error=oauth_token_failed`,
    );
  });
});

Deno.test("A player whose sign-in outlived its flow is sent from /dashboard back to the linking page it started from", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const page = `/link/${project.slug}`;
  // Given a sign-in left at Roblox's consent screen for more than 10 minutes
  const { callback: path, jar } = await consent(world, project.slug);
  world.clock.advance(10 * 60_000);
  // When the provider sends the player back: the spec's redirect to the dashboard
  const mismatch = await callback(world, path, jar);
  assert.equal(mismatch, "/dashboard?error=oauth_state_mismatch");
  // Then the dashboard sends the player on to the linking page, with the error to explain
  const onward = await browse(world.app, mismatch, { jar });
  assert.deepEqual([onward.status, onward.headers.get("location")], [
    303,
    `${page}?error=oauth_state_mismatch`,
  ]);
  await onward.body?.cancel();
  const html = await (await browse(world.app, `${page}?error=oauth_state_mismatch`, { jar }))
    .text();
  assert.ok(html.includes("Sign-in took too long"), "the linking page explains");
  // And a browser that started no player sign-in still gets the developers' sign-in
  const developer = await browse(world.app, mismatch, { jar: new CookieJar() });
  assert.match(developer.headers.get("location") ?? "", /^\/dashboard\/sign-in/);
  await developer.body?.cancel();
});

Deno.test("GET /auth/idp/callback: a callback with another state does not end the sign-in in progress", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const page = `/link/${project.slug}`;

  for (const forged of ["?error=access_denied", "?error=access_denied&state=forged", "?code=x"]) {
    await t.step(`a forged ${forged} link opened mid sign-in`, async () => {
      // Given: a player whose sign-in is at the provider's consent page.
      const { callback: path, jar } = await consent(world, project.slug, 1003);

      // When: a link carrying an error (or a code) but not the flow's state is opened first.
      const res = await browse(world.app, `/auth/idp/callback${forged}`, { jar });
      assert.deepEqual(res.headers.get("location"), `${page}?error=oauth_state_mismatch`);
      assert.deepEqual(res.headers.getSetCookie().filter((l) => l.startsWith(OAUTH)), []);

      // Then: the provider's own callback still signs the player in.
      assert.deepEqual(await callback(world, path, jar), page);
      const me = await browse(world.app, `${page.replace("/link/", "/api/link/")}/me`, { jar });
      assert.deepEqual((await me.json()).user?.id, 1003);
    });
  }
});

Deno.test("GET /auth/idp/callback redirects back to the linking page with each error code", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const page = `/link/${project.slug}`;

  await t.step("idp_denied when the player declines", async () => {
    world.idp.denyNextAuthorize();
    const { callback: path, jar, back } = await consent(world, project.slug);
    assert.deepEqual(back.searchParams.get("error"), "access_denied");
    assert.deepEqual(await callback(world, path, jar), `${page}?error=idp_denied`);
  });
  await t.step("oauth_state_mismatch for a wrong state or no code", async () => {
    const { back, jar } = await consent(world, project.slug);
    back.searchParams.set("state", "not-the-state");
    assert.deepEqual(
      await callback(world, `${back.pathname}${back.search}`, jar),
      `${page}?error=oauth_state_mismatch`,
    );
    const second = await consent(world, project.slug);
    second.back.searchParams.delete("code");
    assert.deepEqual(
      await callback(world, `${second.back.pathname}${second.back.search}`, second.jar),
      `${page}?error=oauth_state_mismatch`,
    );
    const third = await consent(world, project.slug);
    third.back.searchParams.delete("state");
    assert.deepEqual(
      await callback(world, `${third.back.pathname}${third.back.search}`, third.jar),
      `${page}?error=oauth_state_mismatch`,
    );
  });
  await t.step("oauth_token_failed when the provider refuses the code", async () => {
    world.idp.failNextToken({ status: 401, error: "invalid_client" });
    const { callback: path, jar } = await consent(world, project.slug);
    assert.deepEqual(await callback(world, path, jar), `${page}?error=oauth_token_failed`);
  });
  await t.step("oauth_token_failed when the saved client secret is wrong", async () => {
    const other = await createLinkProject(world);
    const wrong = await encryptOauthClientSecret(world.t.ctx, other.id, "not-the-secret");
    await updateProject(world.t.kv, other.id, (p) => ({
      ...p,
      settings: { ...p.settings, oauthClientSecretEnc: wrong },
    }));
    const { callback: path, jar } = await consent(world, other.slug);
    assert.deepEqual(
      await callback(world, path, jar),
      `/link/${other.slug}?error=oauth_token_failed`,
    );
  });
  await t.step("oauth_token_failed when the saved secret cannot be decrypted", async () => {
    const other = await createLinkProject(world);
    await updateProject(world.t.kv, other.id, (p) => ({
      ...p,
      // Sealed for another project: it must not decrypt here.
      settings: { ...p.settings, oauthClientSecretEnc: project.settings.oauthClientSecretEnc },
    }));
    const { callback: path, jar } = await consent(world, other.slug);
    assert.deepEqual(
      await callback(world, path, jar),
      `/link/${other.slug}?error=oauth_token_failed`,
    );
  });
  await t.step("oauth_userinfo_failed when the provider refuses the profile", async () => {
    const before = world.idp.revoked().length;
    world.idp.failNextUserinfo({ status: 500 });
    const { callback: path, jar } = await consent(world, project.slug);
    assert.deepEqual(await callback(world, path, jar), `${page}?error=oauth_userinfo_failed`);
    assert.deepEqual(jar.get(SESSION), undefined);
    // The grant is revoked even though sign-in failed.
    assert.deepEqual(world.idp.revoked().length, before + 1);
  });
  await t.step("oauth_not_configured when the app was removed mid-flow", async () => {
    const { callback: path, jar } = await consent(world, project.slug);
    await updateProject(world.t.kv, project.id, (p) => ({
      ...p,
      settings: { ...p.settings, oauthClientId: null, oauthClientSecretEnc: null },
    }));
    assert.deepEqual(await callback(world, path, jar), `${page}?error=oauth_not_configured`);
  });
});

Deno.test("GET /auth/idp/callback to an unreachable provider redirects with oauth_token_failed", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { callback: path, jar } = await consent(world, project.slug);
  await world.idp.close();
  assert.deepEqual(
    await callback(world, path, jar),
    `/link/${project.slug}?error=oauth_token_failed`,
  );
});

Deno.test("A new sign-in replaces the session; a session counts only on its own project", async () => {
  await using world = await startLinkWorld();
  const first = await createLinkProject(world);
  const second = await createLinkProject(world);
  const { jar } = await signInPlayer(world, first, 1001);
  const me = async (slug: string) =>
    (await (await browse(world.app, `/api/link/${slug}/me`, { jar })).json()).user?.id ?? null;
  assert.deepEqual(await me(first.slug), 1001);
  assert.deepEqual(await me(second.slug), null);

  await signInPlayer(world, second, 1003, jar);
  assert.deepEqual(await me(second.slug), 1003);
  assert.deepEqual(await me(first.slug), null);

  world.clock.advance(60 * 60_000 - 1);
  assert.deepEqual(await me(second.slug), 1003);
  world.clock.advance(1);
  assert.deepEqual(await me(second.slug), null);
});

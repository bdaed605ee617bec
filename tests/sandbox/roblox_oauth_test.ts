import assert from "node:assert/strict";
import { base64urlnopad } from "@scure/base";
import {
  createOauthTestClient,
  createPkce,
  postForm,
  startOauthStandIn,
} from "../../sandbox/roblox/mod.ts";
import { CLIENT, expectOauthError, REDIRECT_URI, withStandIn } from "../support/oauth_stand_in.ts";

Deno.test("startOauthStandIn() runs the authorization code flow with PKCE like Roblox", async () => {
  await withStandIn(async ({ standIn, rp }) => {
    // Given
    const pkce = await createPkce();
    const url = rp.authorizeUrl(pkce.challenge, { nonce: "n-1" });

    // When: the consent page is shown, then Allow is played for player 1001
    const page = await fetch(url);
    const html = await page.text();
    const location = new URL(await standIn.authorizeAutomatically(url, 1001));
    const code = location.searchParams.get("code")!;
    const res = await rp.exchange(code, pkce.verifier);
    const tokens = await res.json();

    // Then
    assert.equal(page.status, 200);
    for (const text of ["Allow", "Deny", "Block Builder", "PixelPilot", "#1003"]) {
      assert.ok(html.includes(text), `consent page lacks ${text}`);
    }
    assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
    assert.equal(location.searchParams.get("state"), "state-123");
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "no-store");
    assert.deepEqual(Object.keys(tokens).sort(), [
      "access_token",
      "expires_in",
      "id_token",
      "refresh_token",
      "scope",
      "token_type",
    ]);
    assert.equal(tokens.token_type, "Bearer");
    assert.equal(tokens.expires_in, 899);
    assert.equal(tokens.scope, "openid profile");

    const info = await rp.userinfo(tokens.access_token);
    assert.deepEqual(await info.json(), {
      sub: "1001",
      name: "Block Builder",
      nickname: "Block Builder",
      preferred_username: "BlockBuilder",
      created_at: 1_577_836_800,
      profile: "https://www.roblox.com/users/1001/profile",
      picture: `${standIn.url}/_avatars/1001.svg`,
    });
    const avatar = await fetch(`${standIn.url}/_avatars/1001.svg`);
    assert.equal(avatar.headers.get("content-type"), "image/svg+xml");
    await avatar.body?.cancel();
  });
});

Deno.test("startOauthStandIn() issues an ES256 ID token verifiable with v1/certs", async () => {
  await withStandIn(async ({ standIn, rp, clock }) => {
    // Given
    const pkce = await createPkce();
    const url = rp.authorizeUrl(pkce.challenge, { nonce: "n-1" });
    const code = new URL(await standIn.authorizeAutomatically(url, 1002)).searchParams.get("code")!;
    const tokens = await (await rp.exchange(code, pkce.verifier)).json();

    // When
    const discovery = await (await fetch(`${standIn.idpUrl}/.well-known/openid-configuration`))
      .json();
    const { keys } = await (await fetch(discovery.jwks_uri)).json();
    const [header, payload, signature] = tokens.id_token.split(".");
    const key = await crypto.subtle.importKey(
      "jwk",
      keys[0],
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["verify"],
    );
    const valid = await crypto.subtle.verify(
      { name: "ECDSA", hash: "SHA-256" },
      key,
      new Uint8Array(base64urlnopad.decode(signature)),
      new TextEncoder().encode(`${header}.${payload}`),
    );
    const claims = JSON.parse(new TextDecoder().decode(base64urlnopad.decode(payload)));

    // Then
    assert.equal(discovery.issuer, `${standIn.idpUrl}/`);
    assert.equal(discovery.token_endpoint, `${standIn.idpUrl}/v1/token`);
    assert.equal(discovery.revocation_endpoint, `${standIn.idpUrl}/v1/token/revoke`);
    assert.ok(valid);
    assert.equal(claims.iss, `${standIn.idpUrl}/`);
    assert.equal(claims.aud, CLIENT.clientId);
    assert.equal(claims.sub, "1002");
    assert.equal(claims.preferred_username, "PixelPilot");
    assert.equal(claims.nonce, "n-1");
    assert.equal(claims.iat, clock.now / 1000);
  });
});

Deno.test("GET v1/authorize refuses bad requests like Roblox", async (t) => {
  await withStandIn(async ({ rp }) => {
    const { challenge } = await createPkce();

    await t.step(
      "unknown client or unregistered redirect_uri: error page, no redirect",
      async () => {
        for (
          const overrides of [
            { client_id: "nope" },
            { redirect_uri: "http://127.0.0.1:8000/elsewhere" },
          ] as Record<string, string>[]
        ) {
          const res = await fetch(rp.authorizeUrl(challenge, overrides), {
            redirect: "manual",
          });
          assert.equal(res.status, 400);
          assert.equal(res.headers.get("location"), null);
          assert.match(await res.text(), /Authorization error/);
        }
      },
    );

    await t.step("other problems redirect back with error and state", async () => {
      const cases: [Record<string, string>, string][] = [
        [{ scope: "profile" }, "invalid_scope"],
        [{ scope: "openid admin" }, "invalid_scope"],
        [{ response_type: "token" }, "unsupported_response_type"],
        [{ code_challenge_method: "plain" }, "invalid_request"],
        [{ code_challenge: "short" }, "invalid_request"],
      ];
      for (const [overrides, error] of cases) {
        const res = await fetch(rp.authorizeUrl(challenge, overrides), {
          redirect: "manual",
        });
        await res.body?.cancel();
        assert.equal(res.status, 302);
        const location = new URL(res.headers.get("location")!);
        assert.equal(location.searchParams.get("error"), error, JSON.stringify(overrides));
        assert.equal(location.searchParams.get("state"), "state-123");
      }
    });
  });
});

Deno.test("The consent form signs in a typed player and Deny redirects with access_denied", async (t) => {
  await withStandIn(async ({ standIn, rp }) => {
    const pkce = await createPkce();
    const query = new URL(rp.authorizeUrl(pkce.challenge)).searchParams;
    const decide = (fields: Record<string, string>) =>
      fetch(`${standIn.idpUrl}/v1/authorize/decision`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...Object.fromEntries(query), ...fields }),
        redirect: "manual",
      });

    await t.step("Allow with a typed user id and username", async () => {
      const res = await decide({ decision: "allow", custom_id: "77", custom_username: "New_Kid" });
      await res.body?.cancel();
      const code = new URL(res.headers.get("location")!).searchParams.get("code")!;
      const tokens = await (await rp.exchange(code, pkce.verifier)).json();
      const info = await (await rp.userinfo(tokens.access_token)).json();
      assert.equal(info.sub, "77");
      assert.equal(info.preferred_username, "New_Kid");
      assert.equal(info.picture, null);
    });

    await t.step("Allow without a player shows an error page", async () => {
      const res = await decide({ decision: "allow" });
      assert.equal(res.status, 400);
      assert.match(await res.text(), /Pick a player/);
    });

    await t.step("Deny", async () => {
      const res = await decide({ decision: "deny", user_id: "1001" });
      await res.body?.cancel();
      const location = new URL(res.headers.get("location")!);
      assert.equal(location.searchParams.get("error"), "access_denied");
      assert.ok(location.searchParams.get("error_description"));
      assert.equal(location.searchParams.get("state"), "state-123");
    });
  });
});

Deno.test("startOauthStandIn() fail switches misbehave N times, then recover", async (t) => {
  await withStandIn(async ({ standIn, rp }) => {
    await t.step("denyNextAuthorize() redirects with access_denied once", async () => {
      const { challenge } = await createPkce();
      standIn.denyNextAuthorize();
      const denied = new URL(
        await standIn.authorizeAutomatically(rp.authorizeUrl(challenge), 1001),
      );
      assert.equal(denied.searchParams.get("error"), "access_denied");
      assert.equal(denied.searchParams.get("state"), "state-123");
      const allowed = new URL(
        await standIn.authorizeAutomatically(rp.authorizeUrl(challenge), 1001),
      );
      assert.ok(allowed.searchParams.get("code"));
    });

    await t.step("failNextToken() fails twice without spending the code", async () => {
      const { code, verifier } = await rp.getCode(1001);
      standIn.failNextToken({ count: 2, status: 401, error: "invalid_client" });
      await expectOauthError(await rp.exchange(code, verifier), 401, "invalid_client");
      await expectOauthError(await rp.exchange(code, verifier), 401, "invalid_client");
      const res = await rp.exchange(code, verifier);
      assert.equal(res.status, 200);
      await res.body?.cancel();
    });

    await t.step("failNextUserinfo() with 401 then 500", async () => {
      const tokens = await rp.signIn(1001);
      standIn.failNextUserinfo();
      standIn.failNextUserinfo({ status: 500 });
      await expectOauthError(await rp.userinfo(tokens.access_token), 401, "invalid_token");
      await expectOauthError(await rp.userinfo(tokens.access_token), 500, "server_error");
      const ok = await rp.userinfo(tokens.access_token);
      assert.equal(ok.status, 200);
      await ok.body?.cancel();
    });
  });
});

Deno.test("startOauthStandIn() exposes its controls over HTTP", async (t) => {
  const standIn = await startOauthStandIn({ seedUsers: false });
  const rp = createOauthTestClient(standIn, CLIENT);
  const control = (path: string, body: unknown) =>
    fetch(`${standIn.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  try {
    await t.step("POST /_control/clients and /_control/users", async () => {
      for (
        const [path, body] of [
          ["/_control/clients", CLIENT],
          ["/_control/users", { id: 5, username: "FromHttp", displayName: "From HTTP" }],
        ] as const
      ) {
        const res = await control(path, body);
        assert.equal(res.status, 200);
        await res.body?.cancel();
      }
      const users = await (await fetch(`${standIn.url}/_control/users`)).json();
      assert.deepEqual(users, [{ id: 5, username: "FromHttp", displayName: "From HTTP" }]);
      const tokens = await rp.signIn(5);
      assert.equal((await (await rp.userinfo(tokens.access_token)).json()).sub, "5");
    });

    await t.step("POST /_control/fail arms each switch; DELETE clears them", async () => {
      for (const target of ["authorize", "token", "userinfo"]) {
        const res = await control("/_control/fail", { target, count: 2 });
        assert.equal(res.status, 200);
        await res.body?.cancel();
      }
      const { challenge } = await createPkce();
      const denied = await standIn.authorizeAutomatically(rp.authorizeUrl(challenge), 5);
      assert.match(denied, /error=access_denied/);
      const cleared = await fetch(`${standIn.url}/_control/fail`, { method: "DELETE" });
      await cleared.body?.cancel();
      await rp.signIn(5);
      const bad = await control("/_control/fail", { target: "userinfo", status: 400 });
      assert.equal(bad.status, 400);
      await bad.body?.cancel();
    });

    await t.step("GET /_control/revoked lists revocations", async () => {
      const tokens = await rp.signIn(5);
      const res = await postForm(`${standIn.idpUrl}/v1/token/revoke`, {
        token: tokens.access_token,
      }, {
        authorization: `Basic ${btoa(`${CLIENT.clientId}:${CLIENT.clientSecret}`)}`,
      });
      await res.body?.cancel();
      const revoked = await (await fetch(`${standIn.url}/_control/revoked`)).json();
      assert.deepEqual(revoked.map((r: { kind: string }) => r.kind), ["access_token"]);
    });
  } finally {
    await standIn.close();
  }
});

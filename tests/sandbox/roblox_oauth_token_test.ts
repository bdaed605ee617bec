import assert from "node:assert/strict";
import { createPkce, postForm } from "../../sandbox/roblox/mod.ts";
import { CLIENT, expectOauthError, REDIRECT_URI, withStandIn } from "../support/oauth_stand_in.ts";

Deno.test("POST v1/token refuses what Roblox refuses", async (t) => {
  await withStandIn(async ({ standIn, rp, clock }) => {
    await t.step("wrong code_verifier", async () => {
      const { code } = await rp.getCode(1001);
      const other = await createPkce();
      await expectOauthError(await rp.exchange(code, other.verifier), 400, "invalid_grant");
    });

    await t.step("reused code, which also revokes the tokens it gave", async () => {
      const { code, verifier } = await rp.getCode(1001);
      const first = await (await rp.exchange(code, verifier)).json();
      await expectOauthError(await rp.exchange(code, verifier), 400, "invalid_grant");
      await expectOauthError(await rp.userinfo(first.access_token), 401, "invalid_token");
    });

    await t.step("code older than one minute", async () => {
      const { code, verifier } = await rp.getCode(1001);
      clock.now += 60_000;
      await expectOauthError(await rp.exchange(code, verifier), 400, "invalid_grant");
    });

    await t.step("code just under one minute old still works", async () => {
      const { code, verifier } = await rp.getCode(1001);
      clock.now += 59_999;
      const res = await rp.exchange(code, verifier);
      assert.equal(res.status, 200);
      await res.body?.cancel();
    });

    await t.step("wrong secret or unknown client", async () => {
      const { code, verifier } = await rp.getCode(1001);
      const wrong = { client_secret: "wrong" };
      await expectOauthError(await rp.exchange(code, verifier, wrong), 401, "invalid_client");
      const unknown = { client_id: "999" };
      await expectOauthError(await rp.exchange(code, verifier, unknown), 401, "invalid_client");
    });

    await t.step("redirect_uri different from the authorize one", async () => {
      const { code, verifier } = await rp.getCode(1001);
      const extra = { redirect_uri: "http://127.0.0.1:8000/other" };
      await expectOauthError(await rp.exchange(code, verifier, extra), 400, "invalid_grant");
    });

    await t.step("unsupported grant_type and a non-form body", async () => {
      const { code, verifier } = await rp.getCode(1001);
      const extra = { grant_type: "password" };
      await expectOauthError(
        await rp.exchange(code, verifier, extra),
        400,
        "unsupported_grant_type",
      );
      const json = await fetch(`${standIn.idpUrl}/v1/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "authorization_code", code }),
      });
      await expectOauthError(json, 400, "invalid_request");
    });
  });
});

Deno.test("POST v1/token accepts client credentials by HTTP Basic", async (t) => {
  await withStandIn(async ({ standIn, rp }) => {
    const basic = (secret: string) => ({
      authorization: `Basic ${btoa(`${CLIENT.clientId}:${secret}`)}`,
    });
    const fields = (code: string, verifier: string) => ({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    });

    await t.step("right secret", async () => {
      const { code, verifier } = await rp.getCode(1001);
      const res = await postForm(
        `${standIn.idpUrl}/v1/token`,
        fields(code, verifier),
        basic(CLIENT.clientSecret),
      );
      assert.equal(res.status, 200);
      assert.equal((await res.json()).token_type, "Bearer");
    });

    await t.step("wrong secret", async () => {
      const { code, verifier } = await rp.getCode(1001);
      const res = await postForm(
        `${standIn.idpUrl}/v1/token`,
        fields(code, verifier),
        basic("nope"),
      );
      assert.match(res.headers.get("www-authenticate") ?? "", /^Basic/);
      await expectOauthError(res, 401, "invalid_client");
    });
  });
});

Deno.test("GET v1/userinfo answers the claims of the granted scopes", async (t) => {
  await withStandIn(async ({ standIn, rp, clock }) => {
    await t.step("openid only gives sub alone", async () => {
      const tokens = await rp.signIn(1002, { scope: "openid" });
      assert.equal(tokens.scope, "openid");
      assert.deepEqual(await (await rp.userinfo(tokens.access_token)).json(), {
        sub: "1002",
      });
    });

    await t.step("bad token, refresh token, or no header: 401", async () => {
      const tokens = await rp.signIn(1001);
      await expectOauthError(await rp.userinfo("nope"), 401, "invalid_token");
      await expectOauthError(await rp.userinfo(tokens.refresh_token), 401, "invalid_token");
      const bare = await fetch(`${standIn.idpUrl}/v1/userinfo`);
      assert.match(bare.headers.get("www-authenticate") ?? "", /invalid_token/);
      await expectOauthError(bare, 401, "invalid_token");
    });

    await t.step("access token after 15 minutes: 401", async () => {
      const tokens = await rp.signIn(1001);
      clock.now += 899_000;
      const fresh = await rp.userinfo(tokens.access_token);
      assert.equal(fresh.status, 200);
      await fresh.body?.cancel();
      clock.now += 1_000;
      await expectOauthError(await rp.userinfo(tokens.access_token), 401, "invalid_token");
    });
  });
});

Deno.test("POST v1/token/revoke revokes the grant and is recorded", async () => {
  await withStandIn(async ({ standIn, rp, clock }) => {
    // Given
    const tokens = await rp.signIn(1003);

    // When
    const res = await rp.revoke(tokens.refresh_token);
    const unknown = await rp.revoke("never-issued");
    const wrongSecret = await rp.revoke(tokens.refresh_token, { client_secret: "wrong" });

    // Then
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "");
    assert.equal(unknown.status, 200);
    await unknown.body?.cancel();
    await expectOauthError(wrongSecret, 401, "invalid_client");
    assert.deepEqual(standIn.revoked(), [
      {
        token: tokens.refresh_token,
        kind: "refresh_token",
        clientId: CLIENT.clientId,
        userId: 1003,
        at: clock.now,
      },
      {
        token: "never-issued",
        kind: "unknown",
        clientId: CLIENT.clientId,
        userId: null,
        at: clock.now,
      },
    ]);
    await expectOauthError(await rp.userinfo(tokens.access_token), 401, "invalid_token");
  });
});

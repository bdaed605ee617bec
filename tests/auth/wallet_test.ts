import { Hono } from "hono";
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import {
  browse,
  CookieJar,
  createLinkProject,
  createTestWallet,
  signInPlayer,
  startLinkWorld,
  type TestWallet,
  toBase64,
} from "../support/sign_in.ts";
import { createTestApp, TEST_BASE_URL, type TestApp } from "../support/test_app.ts";
import { getDeveloperSession } from "../../http/developer_session.ts";
import { getDeveloper } from "../../kv/developers.ts";
import type { AppContext } from "../../lib/context.ts";

const SIGNIN = "__Host-svc_signin";
const DEV = "__Host-svc_dev";

function decodePayload(token: string) {
  const [body] = token.split(".");
  assert.ok(body);
  return JSON.parse(atob(body.replaceAll("-", "+").replaceAll("_", "/")));
}

function encodePayload(payload: unknown) {
  return btoa(JSON.stringify(payload)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

async function allKeys(kv: Deno.Kv) {
  const keys: string[] = [];
  for await (const entry of kv.list({ prefix: [] })) keys.push(JSON.stringify(entry.key));
  return keys;
}

async function walletChallenge(t: TestApp, jar: CookieJar, wallet: TestWallet, next?: string) {
  const res = await browse(t.app, "/auth/wallet/challenge", {
    jar,
    json: { address: wallet.address, ...(next === undefined ? {} : { next }) },
  });
  assert.deepEqual(res.status, 200);
  return (await res.json()).message as string;
}

function walletVerify(t: TestApp, jar: CookieJar, body: unknown) {
  return browse(t.app, "/auth/wallet/verify", { jar, json: body });
}

/** A probe route using the exported helper, as the dashboard will. */
function probe(ctx: AppContext) {
  const app = new Hono().get(
    "/probe",
    async (c) => c.json({ dev: await getDeveloperSession(ctx, c) }),
  );
  return async (jar: CookieJar) => {
    const res = await app.request(`${TEST_BASE_URL}/probe`, { headers: { cookie: jar.header() } });
    return (await res.json()).dev as string | null;
  };
}

Deno.test("POST /auth/wallet/challenge answers the dashboard message and keeps the sign-in only in a cookie", async () => {
  await using t = await createTestApp();
  const wallet = createTestWallet();
  const jar = new CookieJar();
  const before = await allKeys(t.kv);
  const res = await browse(t.app, "/auth/wallet/challenge", {
    jar,
    json: { address: wallet.address, next: "/dashboard/projects/01ABC" },
  });
  assert.deepEqual(res.status, 200);
  const { message } = await res.json();
  const lines = message.split("\n");
  assert.deepEqual(lines.length, 11);
  assert.deepEqual(lines.slice(0, 8), [
    "localhost:8000 wants you to sign in with your Solana account:",
    wallet.address,
    "",
    "Sign in to the Blocklink dashboard. Signing is free and does not send a transaction.",
    "",
    `URI: ${TEST_BASE_URL}/dashboard`,
    "Version: 1",
    "Chain ID: mainnet",
  ]);
  assert.ok(/^Nonce: [A-Za-z0-9]{8,}$/.test(lines[8]), lines[8]);
  assert.deepEqual(lines.slice(9), [
    "Issued At: 2026-11-21T12:00:00.000Z",
    "Expiration Time: 2026-11-21T12:10:00.000Z",
  ]);

  const cookie = res.headers.getSetCookie().find((line) => line.startsWith(`${SIGNIN}=`))!;
  for (const attr of ["Max-Age=600", "Path=/", "HttpOnly", "Secure", "SameSite=Lax"]) {
    assert.ok(cookie.includes(attr), `${attr} in ${cookie}`);
  }
  const payload = decodePayload(jar.get(SIGNIN)!);
  assert.deepEqual(
    { address: payload.address, message: payload.message, next: payload.next },
    { address: wallet.address, message, next: "/dashboard/projects/01ABC" },
  );
  assert.deepEqual(await allKeys(t.kv), before);
});

Deno.test("POST /auth/wallet/challenge: errors in order and next limited to dashboard paths", async (t) => {
  await using app = await createTestApp();
  const wallet = createTestWallet();
  await t.step("bad_origin first", async () => {
    for (const origin of [null, "https://evil.example"]) {
      await assertErrorCode(
        await browse(app.app, "/auth/wallet/challenge", { method: "POST", body: "{", origin }),
        403,
        "bad_origin",
      );
    }
  });
  await t.step("invalid_json, invalid_request, invalid_address", async () => {
    await assertErrorCode(
      await browse(app.app, "/auth/wallet/challenge", { method: "POST", body: "nope" }),
      400,
      "invalid_json",
    );
    await assertErrorCode(
      await browse(app.app, "/auth/wallet/challenge", { json: { next: "/dashboard" } }),
      400,
      "invalid_request",
    );
    await assertErrorCode(
      await browse(app.app, "/auth/wallet/challenge", {
        json: { address: wallet.address, next: 1 },
      }),
      400,
      "invalid_request",
    );
    await assertErrorCode(
      await browse(app.app, "/auth/wallet/challenge", { json: { address: "12345" } }),
      400,
      "invalid_address",
    );
  });
  await t.step("next", async () => {
    const cases: Array<[string | undefined, string]> = [
      [undefined, "/dashboard"],
      ["/dashboard", "/dashboard"],
      ["/dashboard/projects/01ABC?tab=keys", "/dashboard/projects/01ABC?tab=keys"],
      ["/link/some-game", "/dashboard"],
      ["https://evil.example/dashboard", "/dashboard"],
      ["//evil.example/dashboard", "/dashboard"],
      ["/dashboard/../evil", "/dashboard"],
      ["/\\evil.example", "/dashboard"],
    ];
    for (const [next, expected] of cases) {
      const jar = new CookieJar();
      const message = await walletChallenge(app, jar, wallet, next);
      const res = await walletVerify(app, jar, { signature: wallet.sign(message) });
      assert.deepEqual(await res.json(), { next: expected }, String(next));
    }
  });
});

Deno.test("POST /auth/wallet/verify signs the developer in for 12 hours and creates the account once", async () => {
  await using t = await createTestApp();
  const wallet = createTestWallet();
  const jar = new CookieJar();
  const developerOf = probe(t.ctx);
  assert.deepEqual(await getDeveloper(t.kv, wallet.address), null);

  const message = await walletChallenge(t, jar, wallet, "/dashboard/projects");
  const res = await walletVerify(t, jar, { signature: wallet.sign(message) });
  assert.deepEqual([res.status, await res.json()], [200, { next: "/dashboard/projects" }]);
  const lines = res.headers.getSetCookie();
  const session = lines.find((line) => line.startsWith(`${DEV}=`))!;
  for (const attr of ["Max-Age=43200", "Path=/", "HttpOnly", "Secure", "SameSite=Lax"]) {
    assert.ok(session.includes(attr), `${attr} in ${session}`);
  }
  assert.ok(lines.some((line) => line.startsWith(`${SIGNIN}=;`) && line.includes("Max-Age=0")));
  const created = await getDeveloper(t.kv, wallet.address);
  assert.deepEqual(created, {
    address: wallet.address,
    createdAt: t.clock.now(),
    lastSignInAt: t.clock.now(),
  });
  assert.deepEqual(await developerOf(jar), wallet.address);

  t.clock.advance(60_000);
  const again = await walletChallenge(t, jar, wallet);
  assert.deepEqual((await walletVerify(t, jar, { signature: wallet.sign(again) })).status, 200);
  assert.deepEqual(await getDeveloper(t.kv, wallet.address), {
    ...created!,
    lastSignInAt: t.clock.now(),
  });

  t.clock.advance(12 * 60 * 60_000 - 1);
  assert.deepEqual(await developerOf(jar), wallet.address);
  t.clock.advance(1);
  assert.deepEqual(await developerOf(jar), null);
});

Deno.test("POST /auth/wallet/verify: a pending sign-in is single use, 10 minutes, and cannot be altered", async (t) => {
  await using app = await createTestApp();
  const wallet = createTestWallet();
  const expired = (res: Response) => assertErrorCode(res, 400, "challenge_expired");

  await t.step("bad_origin before anything, and the cookie survives it", async () => {
    const jar = new CookieJar();
    const message = await walletChallenge(app, jar, wallet);
    for (const origin of [null, "http://localhost:9999"]) {
      await assertErrorCode(
        await browse(app.app, "/auth/wallet/verify", { jar, method: "POST", body: "{", origin }),
        403,
        "bad_origin",
      );
    }
    assert.deepEqual(
      (await walletVerify(app, jar, { signature: wallet.sign(message) })).status,
      200,
    );
  });
  await t.step("no cookie", async () => {
    await expired(await walletVerify(app, new CookieJar(), { signature: "AAAA" }));
    // Checked before the body.
    await expired(await browse(app.app, "/auth/wallet/verify", { method: "POST", body: "{" }));
  });
  await t.step("used: a second verify from the same browser", async () => {
    const jar = new CookieJar();
    const message = await walletChallenge(app, jar, wallet);
    assert.deepEqual(
      (await walletVerify(app, jar, { signature: wallet.sign(message) })).status,
      200,
    );
    await expired(await walletVerify(app, jar, { signature: wallet.sign(message) }));
  });
  await t.step("replayed: a copy of the cookie taken before verify", async () => {
    const jar = new CookieJar();
    const message = await walletChallenge(app, jar, wallet);
    const copy = new CookieJar();
    copy.set(SIGNIN, jar.get(SIGNIN)!);
    assert.deepEqual(
      (await walletVerify(app, jar, { signature: wallet.sign(message) })).status,
      200,
    );
    await expired(await walletVerify(app, copy, { signature: wallet.sign(message) }));
  });
  await t.step("deleted first, so a failed verify spends it", async () => {
    for (
      const body of ["{", JSON.stringify({ signature: 1 }), JSON.stringify({ signature: "x" })]
    ) {
      const jar = new CookieJar();
      const message = await walletChallenge(app, jar, wallet);
      const res = await browse(app.app, "/auth/wallet/verify", { jar, method: "POST", body });
      assert.deepEqual(res.status, 400);
      assert.ok(res.headers.getSetCookie().some((l) => l.startsWith(`${SIGNIN}=;`)));
      await expired(await walletVerify(app, jar, { signature: wallet.sign(message) }));
    }
  });
  await t.step("older than 10 minutes", async () => {
    const jar = new CookieJar();
    const message = await walletChallenge(app, jar, wallet);
    app.clock.advance(10 * 60_000);
    await expired(await walletVerify(app, jar, { signature: wallet.sign(message) }));
  });
  await t.step("tampered: another address or another next", async () => {
    const thief = createTestWallet();
    for (const change of [{ address: thief.address }, { next: "https://evil.example" }]) {
      const jar = new CookieJar();
      await walletChallenge(app, jar, wallet);
      const [, mac] = jar.get(SIGNIN)!.split(".");
      const payload = { ...decodePayload(jar.get(SIGNIN)!), ...change };
      jar.set(SIGNIN, `${encodePayload(payload)}.${mac}`);
      await expired(await walletVerify(app, jar, { signature: thief.sign(payload.message) }));
    }
  });
  await t.step("a player session cookie under the sign-in name", async () => {
    await using world = await startLinkWorld();
    const project = await createLinkProject(world);
    const { jar } = await signInPlayer(world, project, 1001);
    jar.set(SIGNIN, jar.get("__Host-svc_session")!);
    await expired(await walletVerify(world.t, jar, { signature: "AAAA" }));
  });
});

Deno.test("POST /auth/wallet/verify answers invalid_signature with the two messages", async () => {
  await using t = await createTestApp();
  const wallet = createTestWallet();
  const cases: Array<[(m: string) => string, string]> = [
    [() => "", "Malformed signature"],
    [() => toBase64(new Uint8Array(32)), "Malformed signature"],
    [() => "%%%%", "Malformed signature"],
    [(m) => createTestWallet().sign(m), "The signature does not match this wallet"],
    [
      (m) => wallet.sign(m.replace("Blocklink", "Blockl1nk")),
      "The signature does not match this wallet",
    ],
  ];
  for (const [sign, text] of cases) {
    const jar = new CookieJar();
    const message = await walletChallenge(t, jar, wallet);
    const body = await assertErrorCode(
      await walletVerify(t, jar, { signature: sign(message) }),
      400,
      "invalid_signature",
    );
    assert.deepEqual(body.error.message, text);
    assert.deepEqual(jar.get(DEV), undefined);
  }
  assert.deepEqual(await getDeveloper(t.kv, wallet.address), null);
});

Deno.test("POST /auth/logout needs the same origin and clears both sessions", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const developerOf = probe(world.t.ctx);

  async function bothSessions() {
    const { jar } = await signInPlayer(world, project, 1001);
    const wallet = createTestWallet();
    const message = await walletChallenge(world.t, jar, wallet);
    assert.deepEqual(
      (await walletVerify(world.t, jar, { signature: wallet.sign(message) })).status,
      200,
    );
    return jar;
  }
  const player = async (jar: CookieJar) =>
    (await (await browse(world.app, `/api/link/${project.slug}/me`, { jar })).json()).user;

  await t.step("bad_origin", async () => {
    const jar = await bothSessions();
    for (const origin of [null, "https://evil.example"]) {
      await assertErrorCode(
        await browse(world.app, "/auth/logout", { jar, method: "POST", origin }),
        403,
        "bad_origin",
      );
    }
    assert.ok(await player(jar));
    assert.ok(await developerOf(jar));
  });
  await t.step("JSON answer", async () => {
    const jar = await bothSessions();
    const res = await browse(world.app, "/auth/logout", { jar, method: "POST" });
    assert.deepEqual([res.status, await res.json()], [200, { ok: true }]);
    const cleared = res.headers.getSetCookie().filter((line) => line.includes("Max-Age=0"));
    assert.deepEqual(cleared.map((line) => line.split("=")[0]).sort(), [DEV, "__Host-svc_session"]);
    for (const line of cleared) assert.ok(line.includes("Secure") && line.includes("Path=/"));
    assert.deepEqual(await player(jar), null);
    assert.deepEqual(await developerOf(jar), null);
  });
  await t.step("a browser form gets a redirect to /", async () => {
    const jar = await bothSessions();
    const res = await browse(world.app, "/auth/logout", {
      jar,
      method: "POST",
      body: "",
      headers: {
        accept: "text/html,*/*;q=0.8",
        "content-type": "application/x-www-form-urlencoded",
      },
    });
    assert.deepEqual([res.status, res.headers.get("location")], [303, "/"]);
    assert.deepEqual(await player(jar), null);
  });
  await t.step("without any session", async () => {
    const res = await browse(world.app, "/auth/logout", { method: "POST" });
    assert.deepEqual(await res.json(), { ok: true });
  });
});

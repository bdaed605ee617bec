// Per-client abuse limits on the actions that cost us without an API key (issue 12, item 5).
import type { Hono } from "hono";
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import { createTestApp, TEST_BASE_URL } from "../support/test_app.ts";
import {
  browse,
  createLinkProject,
  createTestWallet,
  signInPlayer,
  startLinkWorld,
} from "../support/sign_in.ts";
import {
  createProjectAs,
  postJson,
  postWalletSignIn,
  signInDeveloper,
  type TestDeveloper,
} from "../support/dashboard.ts";
import { joinTeam } from "../support/team.ts";
import { listAuditEntries } from "../../kv/audit_log.ts";
import { ABUSE_WINDOWS } from "../../lib/quota/abuse_limits.ts";
import { loadConfig } from "../../lib/config.ts";

const ORIGIN = new URL(TEST_BASE_URL).origin;

function challengeFrom(app: Hono, ip: string) {
  return app.request(`${TEST_BASE_URL}/auth/wallet/challenge`, {
    method: "POST",
    headers: { origin: ORIGIN, "content-type": "application/json", "x-client-ip": ip },
    body: JSON.stringify({ address: createTestWallet().address }),
  });
}

Deno.test("POST /auth/wallet/challenge is capped per client address, and still writes nothing", async () => {
  await using t = await createTestApp({
    config: {
      abuseLimits: { ...defaultLimits(), signin_challenge: 4 },
      clientIpHeader: "x-client-ip",
    },
  });
  // Given one client asking for challenges over and over
  const statuses = [];
  for (let i = 0; i < 6; i++) {
    const res = await challengeFrom(t.app, "203.0.113.7");
    statuses.push(res.status);
    if (res.status === 429) await assertErrorCode(res, 429, "rate_limited");
    else await res.body?.cancel();
  }
  // Then only the limit passes
  assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
  // And another client, or the same one a minute later, is not affected
  const other = await challengeFrom(t.app, "198.51.100.1");
  assert.deepEqual(other.status, 200);
  await other.body?.cancel();
  t.clock.advance(ABUSE_WINDOWS.signin_challenge.windowMs);
  const later = await challengeFrom(t.app, "203.0.113.7");
  assert.deepEqual(later.status, 200);
  await later.body?.cancel();
  // The spec's "nothing is written to the database" holds: the count lives in memory.
  assert.deepEqual(await Array.fromAsync(t.kv.list({ prefix: [] })), []);
});

/** Statuses of challenges sent with `header: value` each, through an app counting by `header`. */
async function statusesFrom(
  config: { header: string; hops?: number },
  values: string[],
): Promise<number[]> {
  await using t = await createTestApp({
    config: {
      abuseLimits: { ...defaultLimits(), signin_challenge: 2 },
      clientIpHeader: config.header,
      clientIpTrustedHops: config.hops ?? 1,
    },
  });
  const statuses = [];
  for (const value of values) {
    const res = await t.app.request(`${TEST_BASE_URL}/auth/wallet/challenge`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json", [config.header]: value },
      body: JSON.stringify({ address: createTestWallet().address }),
    });
    await res.body?.cancel();
    statuses.push(res.status);
  }
  return statuses;
}

Deno.test("The client is the address our proxies added, whatever the client wrote before it", async (t) => {
  // With a limit of 2: the third request of one client is refused, another client's is not.
  const cases: Array<[string, { header: string; hops?: number }, string[], number[]]> = [
    ["one proxy: the last entry", { header: "x-forwarded-for" }, [
      "192.0.2.1, 203.0.113.7",
      "192.0.2.2, 203.0.113.7",
      "203.0.113.7",
      "203.0.113.8",
    ], [200, 200, 429, 200]],
    ["two proxies: the entry before the last", { header: "x-forwarded-for", hops: 2 }, [
      "192.0.2.1, 203.0.113.7, 10.0.0.1",
      "192.0.2.2,203.0.113.7,10.0.0.2",
      // Fewer entries than proxies: every entry is theirs, and the first is the client.
      "203.0.113.7",
      "192.0.2.3, 203.0.113.9, 10.0.0.1",
    ], [200, 200, 429, 200]],
    ["an IPv6 client counts per /64, with or without brackets and port", { header: "x-real-ip" }, [
      "2001:db8:1:2::1",
      "[2001:DB8:1:2:ffff:ffff:ffff:ffff]:443",
      "2001:0db8:0001:0002:0:0:0:9",
      "2001:db8:1:3::1",
    ], [200, 200, 429, 200]],
    ["IPv4 written as IPv6, or with a port, is that IPv4", { header: "x-real-ip" }, [
      "198.51.100.4",
      "::ffff:198.51.100.4",
      "198.51.100.4:5555",
    ], [200, 200, 429]],
    ["RFC 7239 Forwarded: the for= of our proxy's element", { header: "forwarded" }, [
      'for=192.0.2.60;proto=http, for="[2001:db8:cafe::17]:4711";proto=https',
      'for=unknown, for="[2001:db8:cafe::99]"',
      "for=2001:db8:cafe:0:1::1",
    ], [200, 200, 429]],
  ];
  for (const [name, config, values, expected] of cases) {
    await t.step(name, async () => {
      assert.deepEqual(await statusesFrom(config, values), expected);
    });
  }
});

Deno.test("POST /api/link/:slug/challenge is capped per client across instances on one store", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const config = {
    abuseLimits: { ...defaultLimits(), signin_challenge: 3 },
    clientIpHeader: "x-client-ip",
  };
  await using world = await startLinkWorld({ config, kvPath: path });
  await using second = await createTestApp({
    kvPath: path,
    config: { ...config, idpUrl: world.idp.idpUrl },
    clock: world.clock,
  });
  const project = await createLinkProject(world);
  const { jar } = await signInPlayer(world, project, 1001);
  const statuses = [];
  for (let i = 0; i < 5; i++) {
    const res = await browse(
      i % 2 ? second.app : world.app,
      `/api/link/${project.slug}/challenge`,
      {
        jar,
        json: { address: createTestWallet().address },
        headers: { "x-client-ip": "203.0.113.9" },
      },
    );
    statuses.push(res.status);
    if (res.status === 429) await assertErrorCode(res, 429, "rate_limited");
    else await res.body?.cancel();
  }
  assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  await Deno.remove(path);
});

Deno.test("Concurrent challenges of one client never pass the limit", async () => {
  await using t = await createTestApp({
    config: { abuseLimits: { ...defaultLimits(), signin_challenge: 5 } },
  });
  const answers = await Promise.all(
    Array.from({ length: 20 }, () => challengeFrom(t.app, "ignored")),
  );
  const statuses = answers.map((r) => r.status);
  await Promise.all(answers.map((r) => r.body?.cancel()));
  assert.deepEqual(statuses.filter((s) => s === 200).length, 5);
  assert.deepEqual(statuses.filter((s) => s === 429).length, 15);
});

function defaultLimits() {
  return loadConfig({ SECRET: "x".repeat(32) }).abuseLimits;
}

Deno.test("New developer accounts are capped per client address; returning developers are not", async () => {
  await using t = await createTestApp({
    config: { abuseLimits: { ...defaultLimits(), developer_account: 2 } },
  });
  const first = await signInDeveloper(t.app);
  await signInDeveloper(t.app);
  const refused = await postWalletSignIn(t.app, createTestWallet());
  await assertErrorCode(refused, 429, "rate_limited");
  // The first developer still signs in again
  await signInDeveloper(t.app, first.wallet);
});

Deno.test("Project creations and deletions are capped per developer", async () => {
  await using t = await createTestApp({
    config: { abuseLimits: { ...defaultLimits(), project_change: 3 } },
  });
  const dev = await signInDeveloper(t.app);
  const a = await createProjectAs(t.app, dev, { name: "A" });
  await createProjectAs(t.app, dev, { name: "B" });
  const del = await postJson(t.app, `/dashboard/projects/${a.id}/delete`, { name: "A" }, {
    jar: dev.jar,
  });
  assert.deepEqual(del.status, 200);
  const refused = await postJson(t.app, "/dashboard/projects", { name: "C", cluster: "devnet" }, {
    jar: dev.jar,
  });
  const body = await assertErrorCode(refused, 429, "rate_limited");
  assert.ok(body.error.message.includes("3 project creations and deletions per hour"));
  // Another developer is not affected
  const other = await signInDeveloper(t.app);
  await createProjectAs(t.app, other, { name: "D" });
});

Deno.test("Watch creation and test pings are capped per developer", async () => {
  await using t = await createTestApp({
    config: { abuseLimits: { ...defaultLimits(), watch_create: 2, test_ping: 2 } },
  });
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev, { name: "Watched" });
  const watch = (name: string) =>
    postJson(t.app, `/dashboard/projects/${project.id}/watches`, {
      name,
      address: createTestWallet().address,
    }, { jar: dev.jar });
  assert.deepEqual((await watch("one")).status, 201);
  assert.deepEqual((await watch("two")).status, 201);
  await assertErrorCode(await watch("three"), 429, "rate_limited");
  const ping = () =>
    postJson(t.app, `/dashboard/projects/${project.id}/ping`, {}, { jar: dev.jar });
  assert.deepEqual((await ping()).status, 200);
  assert.deepEqual((await ping()).status, 200);
  await assertErrorCode(await ping(), 429, "rate_limited");
});

Deno.test("Dashboard changes are capped per member of a project, counted only once made", async (t) => {
  await using app = await createTestApp({
    config: { abuseLimits: { ...defaultLimits(), dashboard_change: 3 } },
  });
  const owner = await signInDeveloper(app.app);
  const project = await createProjectAs(app.app, owner, { name: "Busy" });
  // The invitation is one of the owner's changes; the admin has made none yet.
  const admin = await joinTeam(app.app, owner, project.id, "admin");
  const rename = (dev: TestDeveloper, name: unknown, id = project.id) =>
    postJson(app.app, `/dashboard/projects/${id}/settings`, { name }, { jar: dev.jar });
  const renames = async () =>
    (await Array.fromAsync(listAuditEntries(app.kv, project.id, { now: app.clock.now() })))
      .filter((e) => e.action === "settings_saved").length;

  await t.step(
    "a refused body is not counted; the member's third change is their last",
    async () => {
      await assertErrorCode(await rename(admin, ""), 400, "invalid_settings");
      for (const name of ["One", "Two", "Three"]) {
        assert.equal(
          (await rename(admin, name)).status,
          200,
        );
      }
      const refused = await rename(admin, "Four");
      const body = await assertErrorCode(refused, 429, "rate_limited");
      assert.match(body.error.message, /at most 3 changes per hour by one member of a project/);
      assert.equal(await renames(), 3, "the refused change wrote no entry");
    },
  );

  await t.step(
    "another member of the project, and the member's other project, are not affected",
    async () => {
      assert.equal((await rename(owner, "Owner's")).status, 200);
      const other = await createProjectAs(app.app, owner, { name: "Quiet" });
      assert.equal((await rename(owner, "Still quiet", other.id)).status, 200);
    },
  );

  await t.step(
    "concurrent changes never pass the cap, and the next hour opens it again",
    async () => {
      app.clock.advance(ABUSE_WINDOWS.dashboard_change.windowMs);
      const before = await renames();
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => rename(admin, `Burst ${i}`)),
      );
      const statuses = answers.map((r) => r.status).sort();
      await Promise.all(answers.map((r) => r.body?.cancel()));
      assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
      assert.equal(await renames(), before + 3);
    },
  );
});

Deno.test("loadConfig() reads each abuse limit from its environment variable", () => {
  const config = loadConfig({
    SECRET: "x".repeat(32),
    LIMIT_SIGNIN_CHALLENGES_PER_MINUTE: "1",
    LIMIT_NEW_ACCOUNTS_PER_HOUR: "2",
    LIMIT_PROJECT_CHANGES_PER_HOUR: "3",
    LIMIT_NEW_WATCHES_PER_HOUR: "4",
    LIMIT_TEST_PINGS_PER_MINUTE: "5",
    LIMIT_NEW_KEYS_PER_HOUR: "6",
    LIMIT_DASHBOARD_CHANGES_PER_HOUR: "7",
    LIMIT_SANDBOX_AIRDROPS_PER_HOUR: "7",
    CLIENT_IP_HEADER: "X-Forwarded-For",
  });
  assert.deepEqual(config.abuseLimits, {
    signin_challenge: 1,
    developer_account: 2,
    project_change: 3,
    watch_create: 4,
    test_ping: 5,
    key_create: 6,
    dashboard_change: 7,
    sandbox_airdrop: 7,
  });
  assert.deepEqual(config.clientIpHeader, "x-forwarded-for");
  assert.deepEqual(config.clientIpTrustedHops, 1);
  const two = loadConfig({
    SECRET: "x".repeat(32),
    CLIENT_IP_HEADER: "x-forwarded-for",
    CLIENT_IP_TRUSTED_HOPS: "2",
  });
  assert.deepEqual(two.clientIpTrustedHops, 2);
  for (const hops of ["0", "11", "1.5", "x"]) {
    assert.throws(
      () =>
        loadConfig({
          SECRET: "x".repeat(32),
          CLIENT_IP_HEADER: "x-forwarded-for",
          CLIENT_IP_TRUSTED_HOPS: hops,
        }),
      /CLIENT_IP_TRUSTED_HOPS:/,
    );
  }
  // Hops without the header they count in is a mistake, not a default.
  assert.throws(
    () => loadConfig({ SECRET: "x".repeat(32), CLIENT_IP_TRUSTED_HOPS: "2" }),
    /CLIENT_IP_TRUSTED_HOPS: needs CLIENT_IP_HEADER/,
  );
  assert.deepEqual(defaultLimits(), {
    signin_challenge: 30,
    developer_account: 10,
    project_change: 20,
    watch_create: 60,
    test_ping: 10,
    key_create: 20,
    dashboard_change: 120,
    sandbox_airdrop: 20,
  });
});

import type { DeliverEventJob } from "../../lib/events/job_payloads.ts";
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import {
  browse,
  CookieJar,
  createLinkProject,
  createTestWallet,
  linkWith,
  type LinkWorld,
  signInPlayer,
  startLinkWorld,
  toBase64,
} from "../support/sign_in.ts";
import { call, TEST_BASE_URL } from "../support/test_app.ts";
import { deleteProject, type Project } from "../../kv/projects.ts";
import { getLinkByAddress, getLinkByUser } from "../../kv/links.ts";
import { listJobs } from "../../kv/jobs.ts";
import { createApiKey } from "../../kv/api_keys.ts";

async function challenge(world: LinkWorld, project: Project, jar: CookieJar, address: string) {
  const res = await browse(world.app, `/api/link/${project.slug}/challenge`, {
    jar,
    json: { address },
  });
  assert.deepEqual(res.status, 200);
  return await res.json() as { nonce: string; message: string };
}

function verify(world: LinkWorld, project: Project, jar: CookieJar, body: unknown) {
  return browse(world.app, `/api/link/${project.slug}/verify`, { jar, json: body });
}

/** The link events queued for delivery for `project`, in the order they were written. */
async function linkEvents(world: LinkWorld, project: Project) {
  const jobs = await listJobs(world.t.kv);
  return jobs
    .filter((job) => job.payload.type === "deliver_event" && job.payload.projectId === project.id)
    .map((job) => (job.payload as DeliverEventJob).event)
    .filter((event) => event.type === "wallet_linked" || event.type === "wallet_unlinked");
}

Deno.test("GET /api/link/:slug/me answers the player and link of this project's session only", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const other = await createLinkProject(world);

  const none = await browse(world.app, `/api/link/${project.slug}/me`);
  assert.deepEqual(await none.json(), { user: null, link: null });
  await assertErrorCode(await browse(world.app, "/api/link/nope/me"), 404, "project_not_found");

  const { jar } = await signInPlayer(world, project, 1003);
  const before = await browse(world.app, `/api/link/${project.slug}/me`, { jar });
  assert.deepEqual(await before.json(), {
    user: { id: 1003, name: "QuietNed", displayName: "Ned", avatar: null },
    link: null,
  });
  const wallet = createTestWallet();
  assert.deepEqual((await linkWith(world, project, jar, wallet)).status, 200);
  const after = await (await browse(world.app, `/api/link/${project.slug}/me`, { jar })).json();
  assert.deepEqual(after.link, { address: wallet.address, linkedAt: world.clock.now() });
  const elsewhere = await browse(world.app, `/api/link/${other.slug}/me`, { jar });
  assert.deepEqual(await elsewhere.json(), { user: null, link: null });
});

Deno.test("POST /api/link/* checks same origin first, then the project, then the session, then the body", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const gone = await createLinkProject(world);
  await deleteProject(world.t.kv, gone.id, world.clock.now());
  const { jar } = await signInPlayer(world, project, 1001);

  for (const action of ["challenge", "verify", "unlink"]) {
    await t.step(action, async () => {
      const path = (slug: string) => `/api/link/${slug}/${action}`;
      for (const origin of [null, "http://evil.example", "http://localhost:8001", "null"]) {
        await assertErrorCode(
          await browse(world.app, path(project.slug), { jar, method: "POST", origin, body: "{" }),
          403,
          "bad_origin",
        );
      }
      await assertErrorCode(
        await browse(world.app, path("nope"), { method: "POST", origin: "http://evil.example" }),
        403,
        "bad_origin",
      );
      await assertErrorCode(
        await browse(world.app, path("nope"), { jar, method: "POST", body: "{" }),
        404,
        "project_not_found",
      );
      await assertErrorCode(
        await browse(world.app, path(gone.slug), { jar, method: "POST", body: "{" }),
        404,
        "project_not_found",
      );
      await assertErrorCode(
        await browse(world.app, path(project.slug), { method: "POST", body: "{" }),
        401,
        "not_signed_in",
      );
    });
  }
  await t.step("body errors come after the session", async () => {
    const path = `/api/link/${project.slug}/challenge`;
    await assertErrorCode(
      await browse(world.app, path, { jar, method: "POST" }),
      400,
      "invalid_json",
    );
    await assertErrorCode(
      await browse(world.app, path, { jar, method: "POST", body: "{" }),
      400,
      "invalid_json",
    );
    const bad = await assertErrorCode(
      await browse(world.app, path, { jar, json: { address: 5 } }),
      400,
      "invalid_request",
    );
    assert.ok(bad.error.message.startsWith("address: "), bad.error.message);
    await assertErrorCode(
      await browse(world.app, `/api/link/${project.slug}/verify`, { jar, json: { nonce: "x" } }),
      400,
      "invalid_request",
    );
    for (const address of ["123", "0xabc", "", "O0Il".repeat(10), "1".repeat(45)]) {
      await assertErrorCode(
        await browse(world.app, path, { jar, json: { address } }),
        400,
        "invalid_address",
      );
    }
  });
});

Deno.test("POST /api/link/:slug/challenge answers the spec's message, line by line", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world, { name: "Sky Racers", cluster: "mainnet" });
  const { jar } = await signInPlayer(world, project, 1002);
  const wallet = createTestWallet();
  const { nonce, message } = await challenge(world, project, jar, wallet.address);

  assert.ok(/^[A-Za-z0-9]{8,}$/.test(nonce), nonce);
  assert.deepEqual(message.split("\n"), [
    "localhost:8000 wants you to sign in with your Solana account:",
    wallet.address,
    "",
    `Link this wallet to Roblox account @PixelPilot (1002) in Sky Racers. Signing is free and does not send a transaction.`,
    "",
    `URI: ${TEST_BASE_URL}/link/${project.slug}`,
    "Version: 1",
    "Chain ID: mainnet",
    `Nonce: ${nonce}`,
    "Issued At: 2026-11-21T12:00:00.000Z",
    "Expiration Time: 2026-11-21T12:10:00.000Z",
  ]);
  const devnet = await createLinkProject(world);
  const second = await signInPlayer(world, devnet, 1002);
  const other = await challenge(world, devnet, second.jar, wallet.address);
  assert.deepEqual(other.message.split("\n")[7], "Chain ID: devnet");
  assert.ok(other.nonce !== nonce);
});

Deno.test("POST /api/link/:slug/challenge: a name stored with format characters cannot reorder the message", async () => {
  await using world = await startLinkWorld();
  // Given: a name stored before such names were refused, with a right-to-left override and a
  // zero-width space (they would show "... in Sky" then the rest of the line reversed).
  const project = await createLinkProject(world, { name: "Sky\u202Esrecar\u200Bx" });
  const { jar } = await signInPlayer(world, project, 1002);
  const { message } = await challenge(world, project, jar, createTestWallet().address);
  assert.deepEqual(
    message.split("\n")[3],
    "Link this wallet to Roblox account @PixelPilot (1002) in Sky srecar x. Signing is free and does not send a transaction.",
  );
});

Deno.test("POST /api/link/:slug/verify links the wallet and answers { link }", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { jar } = await signInPlayer(world, project, 1001);
  const wallet = createTestWallet();
  const { nonce, message } = await challenge(world, project, jar, wallet.address);
  world.clock.advance(5_000);

  const res = await verify(world, project, jar, { nonce, signature: wallet.sign(message) });
  assert.deepEqual(res.status, 200);
  assert.deepEqual(await res.json(), {
    link: { address: wallet.address, linkedAt: world.clock.now() },
  });
  // The game sees it through its API.
  const { plaintext } = await createApiKey(world.t.kv, project.id, world.clock.now());
  const seen = await call(world.app, "/v1/players/1001/wallet", { apiKey: plaintext });
  assert.deepEqual(await seen.json(), {
    userId: 1001,
    address: wallet.address,
    linkedAt: world.clock.now(),
  });
});

Deno.test("POST /api/link/:slug/verify answers invalid_signature with the two messages", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { jar } = await signInPlayer(world, project, 1001);
  const wallet = createTestWallet();

  const malformed = [
    "",
    "not base64!",
    toBase64(new Uint8Array(63)),
    toBase64(new Uint8Array(65)),
    "A".repeat(87) + "=",
  ];
  for (const signature of malformed) {
    await t.step(`malformed ${JSON.stringify(signature.slice(0, 12))}`, async () => {
      const { nonce } = await challenge(world, project, jar, wallet.address);
      const body = await assertErrorCode(
        await verify(world, project, jar, { nonce, signature }),
        400,
        "invalid_signature",
      );
      assert.deepEqual(body.error.message, "Malformed signature");
    });
  }
  const mismatched: Array<[string, (message: string) => string]> = [
    ["another wallet's signature", (m) => createTestWallet().sign(m)],
    ["a signature over other text", (m) => wallet.sign(`${m} `)],
    ["64 zero bytes", () => toBase64(new Uint8Array(64))],
  ];
  for (const [name, sign] of mismatched) {
    await t.step(name, async () => {
      const { nonce, message } = await challenge(world, project, jar, wallet.address);
      const body = await assertErrorCode(
        await verify(world, project, jar, { nonce, signature: sign(message) }),
        400,
        "invalid_signature",
      );
      assert.deepEqual(body.error.message, "The signature does not match this wallet");
    });
  }
  assert.deepEqual(await getLinkByUser(world.t.kv, project.id, 1001), null);
});

Deno.test("Challenge nonces are single use, 10 minutes, bound to the project and the player", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const other = await createLinkProject(world);
  const alice = (await signInPlayer(world, project, 1001)).jar;
  const bob = (await signInPlayer(world, project, 1002)).jar;
  const wallet = createTestWallet();
  const expired = async (res: Response) => await assertErrorCode(res, 400, "challenge_expired");

  await t.step("reused after success", async () => {
    const { nonce, message } = await challenge(world, project, alice, wallet.address);
    const signature = wallet.sign(message);
    assert.deepEqual((await verify(world, project, alice, { nonce, signature })).status, 200);
    await expired(await verify(world, project, alice, { nonce, signature }));
  });
  await t.step("consumed by a failed verify", async () => {
    const { nonce, message } = await challenge(world, project, alice, wallet.address);
    await assertErrorCode(
      await verify(world, project, alice, { nonce, signature: "AAAA" }),
      400,
      "invalid_signature",
    );
    await expired(await verify(world, project, alice, { nonce, signature: wallet.sign(message) }));
  });
  await t.step("another player's nonce (and it is spent for its owner too)", async () => {
    const { nonce, message } = await challenge(world, project, alice, wallet.address);
    await expired(await verify(world, project, bob, { nonce, signature: wallet.sign(message) }));
    await expired(await verify(world, project, alice, { nonce, signature: wallet.sign(message) }));
  });
  await t.step("another project's nonce", async () => {
    const elsewhere = (await signInPlayer(world, other, 1001)).jar;
    const { nonce, message } = await challenge(world, project, alice, wallet.address);
    await expired(
      await verify(world, other, elsewhere, { nonce, signature: wallet.sign(message) }),
    );
  });
  await t.step("expired after 10 minutes, accepted just before", async () => {
    const early = await challenge(world, project, alice, wallet.address);
    const late = await challenge(world, project, alice, wallet.address);
    world.clock.advance(10 * 60_000 - 1);
    const ok = await verify(world, project, alice, {
      nonce: early.nonce,
      signature: wallet.sign(early.message),
    });
    assert.deepEqual(ok.status, 200);
    world.clock.advance(1);
    await expired(
      await verify(world, project, alice, {
        nonce: late.nonce,
        signature: wallet.sign(late.message),
      }),
    );
  });
  await t.step("unknown, empty or huge nonce", async () => {
    for (const nonce of ["deadbeefdeadbeefdeadbeefdeadbeef", "", "x".repeat(5000)]) {
      await expired(await verify(world, project, alice, { nonce, signature: "AAAA" }));
    }
  });
  await t.step("a session that expired meanwhile is not signed in", async () => {
    const { nonce, message } = await challenge(world, project, alice, wallet.address);
    world.clock.advance(60 * 60_000);
    await assertErrorCode(
      await verify(world, project, alice, { nonce, signature: wallet.sign(message) }),
      401,
      "not_signed_in",
    );
  });
});

Deno.test("Concurrent verifies with one nonce let exactly one through", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { jar } = await signInPlayer(world, project, 1001);
  const wallet = createTestWallet();
  const { nonce, message } = await challenge(world, project, jar, wallet.address);
  const signature = wallet.sign(message);
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => verify(world, project, jar, { nonce, signature })),
  );
  const statuses = answers.map((res) => res.status).sort();
  assert.deepEqual(statuses, [200, 400, 400, 400, 400, 400, 400, 400]);
  for (const res of answers) {
    if (res.status === 400) await assertErrorCode(res, 400, "challenge_expired");
  }
});

Deno.test("Two players verifying the same wallet at once: one owner at the end, events consistent", async (t) => {
  await using world = await startLinkWorld();
  for (let round = 0; round < 5; round++) {
    await t.step(`round ${round}`, async () => {
      const project = await createLinkProject(world, { events: true });
      const alice = (await signInPlayer(world, project, 1001)).jar;
      const bob = (await signInPlayer(world, project, 1002)).jar;
      const wallet = createTestWallet();
      const a = await challenge(world, project, alice, wallet.address);
      const b = await challenge(world, project, bob, wallet.address);

      const [ra, rb] = await Promise.all([
        verify(world, project, alice, { nonce: a.nonce, signature: wallet.sign(a.message) }),
        verify(world, project, bob, { nonce: b.nonce, signature: wallet.sign(b.message) }),
      ]);
      assert.deepEqual([ra.status, rb.status], [200, 200]);

      const owner = (await getLinkByAddress(world.t.kv, project.id, wallet.address))!.userId;
      const loser = owner === 1001 ? 1002 : 1001;
      assert.deepEqual(
        (await getLinkByUser(world.t.kv, project.id, owner))?.address,
        wallet.address,
      );
      assert.deepEqual(await getLinkByUser(world.t.kv, project.id, loser), null);
      const events = await linkEvents(world, project);
      const key = (e: { type: string; userId: number }) => `${e.type}:${e.userId}`;
      assert.deepEqual(
        events.map(key).sort(),
        [
          `wallet_linked:1001`,
          `wallet_linked:1002`,
          `wallet_unlinked:${loser}`,
        ].sort(),
      );
      assert.ok(events.every((e) => e.address === wallet.address));
    });
  }
});

Deno.test("Linking and unlinking publish events as the wallet link state table says", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world, { events: true });
  const alice = (await signInPlayer(world, project, 1001)).jar;
  const bob = (await signInPlayer(world, project, 1002)).jar;
  const walletA = createTestWallet();
  const walletB = createTestWallet();
  // Jobs within one millisecond have no order (and the spec promises none), so compare sorted.
  const seen = async () =>
    (await linkEvents(world, project)).map((e) => `${e.type}:${e.userId}:${e.address}`).sort();
  const expected: string[] = [];

  // Given an unlinked player, when verify succeeds: wallet_linked.
  assert.deepEqual((await linkWith(world, project, alice, walletA)).status, 200);
  expected.push(`wallet_linked:1001:${walletA.address}`);
  assert.deepEqual(await seen(), [...expected].sort());
  // Swap to wallet B: wallet_linked only, no wallet_unlinked for A.
  assert.deepEqual((await linkWith(world, project, alice, walletB)).status, 200);
  expected.push(`wallet_linked:1001:${walletB.address}`);
  assert.deepEqual(await seen(), [...expected].sort());
  assert.deepEqual(await getLinkByAddress(world.t.kv, project.id, walletA.address), null);
  // Same wallet again: wallet_linked again.
  assert.deepEqual((await linkWith(world, project, alice, walletB)).status, 200);
  expected.push(`wallet_linked:1001:${walletB.address}`);
  assert.deepEqual(await seen(), [...expected].sort());
  // Another account takes it: wallet_unlinked for the previous owner, wallet_linked for the new.
  assert.deepEqual((await linkWith(world, project, bob, walletB)).status, 200);
  expected.push(`wallet_unlinked:1001:${walletB.address}`, `wallet_linked:1002:${walletB.address}`);
  assert.deepEqual(await seen(), [...expected].sort());
  // Unlink while linked: wallet_unlinked; unlink again: same answer, no event.
  for (let i = 0; i < 2; i++) {
    const res = await browse(world.app, `/api/link/${project.slug}/unlink`, {
      jar: bob,
      method: "POST",
    });
    assert.deepEqual([res.status, await res.json()], [200, { ok: true }]);
  }
  expected.push(`wallet_unlinked:1002:${walletB.address}`);
  assert.deepEqual(await seen(), [...expected].sort());
  const me = await browse(world.app, `/api/link/${project.slug}/me`, { jar: bob });
  assert.deepEqual((await me.json()).link, null);
  // Alice never had an unlink call: still nothing linked after losing B.
  const unlinked = await browse(world.app, `/api/link/${project.slug}/unlink`, {
    jar: alice,
    method: "POST",
  });
  assert.deepEqual(await unlinked.json(), { ok: true });
  assert.deepEqual(await seen(), [...expected].sort());
});

Deno.test("Linking works without events configured and publishes nothing", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { jar } = await signInPlayer(world, project, 1001);
  assert.deepEqual((await linkWith(world, project, jar, createTestWallet())).status, 200);
  assert.deepEqual(await linkEvents(world, project), []);
});

Deno.test("POST /api/link/:slug/unlink as a plain form redirects back to the page", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { jar } = await signInPlayer(world, project, 1001);
  assert.deepEqual((await linkWith(world, project, jar, createTestWallet())).status, 200);
  const res = await browse(world.app, `/api/link/${project.slug}/unlink`, {
    jar,
    method: "POST",
    body: "",
    headers: {
      accept: "text/html,application/xhtml+xml,*/*;q=0.8",
      "content-type": "application/x-www-form-urlencoded",
    },
  });
  assert.deepEqual([res.status, res.headers.get("location")], [303, `/link/${project.slug}`]);
  assert.deepEqual(await getLinkByUser(world.t.kv, project.id, 1001), null);
});

Deno.test("A tampered, foreign or expired session cookie counts as no session", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const { jar } = await signInPlayer(world, project, 1001);
  const path = `/api/link/${project.slug}/challenge`;
  const json = { address: createTestWallet().address };
  const session = jar.get("__Host-svc_session")!;

  await t.step("payload changed to another user", async () => {
    const [body, mac] = session.split(".");
    assert.ok(body);
    const decoded = JSON.parse(atob(body.replaceAll("-", "+").replaceAll("_", "/")));
    decoded.user.id = 1002;
    const forged = btoa(JSON.stringify(decoded)).replaceAll("+", "-").replaceAll("/", "_")
      .replace(/=+$/, "");
    const forgedJar = new CookieJar();
    forgedJar.set("__Host-svc_session", `${forged}.${mac}`);
    await assertErrorCode(
      await browse(world.app, path, { jar: forgedJar, json }),
      401,
      "not_signed_in",
    );
  });
  await t.step("signature changed", async () => {
    const broken = new CookieJar();
    broken.set("__Host-svc_session", `${session.slice(0, -2)}AA`);
    await assertErrorCode(
      await browse(world.app, path, { jar: broken, json }),
      401,
      "not_signed_in",
    );
  });
  await t.step("a flow cookie value under the session name", async () => {
    const flow = new CookieJar();
    await browse(world.app, `/auth/idp/start?next=/link/${project.slug}`, { jar: flow });
    flow.set("__Host-svc_session", flow.get("__Host-svc_oauth")!);
    await assertErrorCode(await browse(world.app, path, { jar: flow, json }), 401, "not_signed_in");
  });
  await t.step("one hour later", async () => {
    assert.deepEqual((await browse(world.app, path, { jar, json })).status, 200);
    world.clock.advance(60 * 60_000);
    await assertErrorCode(await browse(world.app, path, { jar, json }), 401, "not_signed_in");
  });
});

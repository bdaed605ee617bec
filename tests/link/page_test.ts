import assert from "node:assert/strict";
import {
  browse,
  createLinkProject,
  createTestWallet,
  linkWith,
  signInPlayer,
  startLinkWorld,
} from "../support/sign_in.ts";
import { deleteProject } from "../../kv/projects.ts";
import { GENERIC_SIGN_IN_ERROR, SIGN_IN_ERROR_MESSAGES } from "../../components/link_page.tsx";

const SECURITY_HEADERS = {
  // The spec's policy word for word, then what every page adds (scripts only from our bundle).
  "content-security-policy":
    "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; script-src 'self'; object-src 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
};

function assertSecurityHeaders(res: Response) {
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) {
    assert.deepEqual(res.headers.get(name), value, name);
  }
  assert.ok(res.headers.get("content-type")?.startsWith("text/html"));
}

/** Text as the page writes it (Preact escapes &, <, > and quotes in text). */
function html(text: string) {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

Deno.test("GET /link/:slug of an unknown or deleted game answers the 404 no-game page", async () => {
  await using world = await startLinkWorld();
  const gone = await createLinkProject(world);
  await deleteProject(world.t.kv, gone.id, world.clock.now());
  for (const slug of ["no-such-game", gone.slug, "x".repeat(300)]) {
    const res = await browse(world.app, `/link/${slug}`);
    assert.deepEqual(res.status, 404);
    assertSecurityHeaders(res);
    const page = await res.text();
    assert.ok(page.startsWith("<!doctype html>"));
    assert.ok(page.includes("No game uses this link"));
    assert.ok(!page.includes("/static/islands.js"));
  }
});

Deno.test("GET /link/:slug disables sign-in until the game saved its OAuth app", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world, { oauth: false, name: "Moon Miners" });
  const res = await browse(world.app, `/link/${project.slug}`);
  assert.deepEqual(res.status, 200);
  assertSecurityHeaders(res);
  const page = await res.text();
  assert.ok(/<button[^>]*disabled[^>]*>\s*Sign in with Roblox/.test(page), "disabled button");
  assert.ok(page.includes("Moon Miners has not set up Roblox sign-in yet"));
  assert.ok(!page.includes("/auth/idp/start"));
  // The redirect's code shows nothing twice.
  const again = await (await browse(world.app, `/link/${project.slug}?error=oauth_not_configured`))
    .text();
  assert.deepEqual(again.split("has not set up Roblox sign-in yet").length, 2);
});

Deno.test("GET /link/:slug offers sign-in and shows a message for each ?error= code", async (t) => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world, { name: "Sky Racers" });
  const res = await browse(world.app, `/link/${project.slug}`);
  assertSecurityHeaders(res);
  const page = await res.text();
  assert.ok(page.includes(`href="/auth/idp/start?next=%2Flink%2F${project.slug}"`));
  assert.ok(page.includes("Link a Solana wallet to Sky Racers"));
  assert.ok(!page.includes('role="alert"'));
  assert.ok(!page.includes("/static/islands.js"), "no script before sign-in");

  for (const [code, message] of Object.entries(SIGN_IN_ERROR_MESSAGES)) {
    await t.step(code, async () => {
      const body = await (await browse(world.app, `/link/${project.slug}?error=${code}`)).text();
      assert.ok(body.includes(html(message)), message);
    });
  }
  await t.step("unknown codes show the generic message, never the raw code", async () => {
    for (const code of ["weird", "<script>alert(1)</script>", "toString", "__proto__"]) {
      const url = `/link/${project.slug}?error=${encodeURIComponent(code)}`;
      const body = await (await browse(world.app, url)).text();
      assert.ok(body.includes(html(GENERIC_SIGN_IN_ERROR)), code);
      assert.ok(!body.includes("<script>alert"));
    }
  });
});

Deno.test("GET /link/:slug signed in shows the player, the wallet and the island", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world, { name: "Sky Racers" });
  const other = await createLinkProject(world);
  const { jar } = await signInPlayer(world, project, 1002);

  const before = await (await browse(world.app, `/link/${project.slug}`, { jar })).text();
  assert.ok(before.includes("Pixel Pilot"));
  assert.ok(before.includes("@PixelPilot"));
  assert.ok(before.includes(`src="${world.idp.url}/_avatars/1002.svg"`));
  assert.ok(before.includes("No wallet is linked to @PixelPilot yet."));
  assert.ok(before.includes(">Link a wallet<"));
  assert.ok(before.includes('action="/auth/logout"'));
  assert.ok(before.includes("<!--island:LinkFlow:0-->") && before.includes("<!--/island:0-->"));
  assert.ok(before.includes('<script type="module" src="/static/islands.js"></script>'));
  const islands = /<script type="application\/json" id="__islands">(.*?)<\/script>/s.exec(before)
    ?.[1];
  assert.ok(islands);
  const props = JSON.parse(islands);
  assert.deepEqual(props, [{
    slug: project.slug,
    gameName: "Sky Racers",
    pageUrl: `http://localhost:8000/link/${project.slug}`,
    player: {
      id: 1002,
      name: "PixelPilot",
      displayName: "Pixel Pilot",
      avatar: `${world.idp.url}/_avatars/1002.svg`,
    },
    link: null,
    // No reward is waiting for this player (tests/browser/link_rewards_test.ts shows some).
    rewards: [],
  }]);

  const wallet = createTestWallet();
  assert.deepEqual((await linkWith(world, project, jar, wallet)).status, 200);
  const after = await (await browse(world.app, `/link/${project.slug}`, { jar })).text();
  assert.ok(after.includes(wallet.address));
  assert.ok(after.includes(">Change wallet<"));
  assert.ok(/<form[^>]*method="post"[^>]*action="\/api\/link\/[^"]+\/unlink"/.test(after));
  assert.ok(after.includes(">Unlink<"));

  // The session of this game does not sign the player in on another game's page.
  const elsewhere = await (await browse(world.app, `/link/${other.slug}`, { jar })).text();
  assert.ok(!elsewhere.includes("Pixel Pilot"));
  assert.ok(elsewhere.includes("/auth/idp/start"));
});

Deno.test("Island props are escaped so page data cannot close the script or open a comment", async () => {
  await using world = await startLinkWorld();
  const name = `Evil </script><script>alert(1)</script><!-- \u2028 Game`;
  const project = await createLinkProject(world, { name });
  const { jar } = await signInPlayer(world, project, 1003);
  const page = await (await browse(world.app, `/link/${project.slug}`, { jar })).text();
  assert.ok(!page.includes("<script>alert(1)"));
  const json = /<script type="application\/json" id="__islands">(.*?)<\/script>/s.exec(page)?.[1];
  assert.ok(json);
  assert.ok(!json.includes("<") && !json.includes("\u2028"));
  assert.deepEqual(JSON.parse(json)[0].gameName, name);
  // A player without an avatar gets a placeholder, not a broken image.
  assert.ok(!page.includes('<img class="avatar"'));
});

Deno.test("GET /static/islands.js serves the bundled islands with an ETag", async () => {
  await using world = await startLinkWorld();
  const res = await browse(world.app, "/static/islands.js");
  assert.deepEqual(res.status, 200);
  assert.ok(res.headers.get("content-type")?.startsWith("text/javascript"));
  assert.deepEqual(res.headers.get("cache-control"), "no-cache");
  const code = await res.text();
  assert.ok(code.includes("LinkFlow"), "the island is registered under its name");
  assert.ok(code.includes("wallet-standard:app-ready"), "Wallet Standard discovery is bundled");
  assert.ok(!/^\s*import\s/m.test(code), "self-contained");
  const etag = res.headers.get("etag")!;
  const cached = await browse(world.app, "/static/islands.js", {
    headers: { "if-none-match": etag },
  });
  assert.deepEqual(cached.status, 304);
  await cached.body?.cancel();
});

Deno.test("GET /privacy, linked from every linking page, says what a link keeps and what is never asked for", async () => {
  await using world = await startLinkWorld();
  const project = await createLinkProject(world);
  const linking = await (await browse(world.app, `/link/${project.slug}`)).text();
  assert.ok(linking.includes('<a href="/privacy">Privacy</a>'), "the linking page links it");
  assert.ok(linking.includes("never asks for your recovery phrase"));
  const res = await browse(world.app, "/privacy");
  assert.equal(res.status, 200);
  assertSecurityHeaders(res);
  const page = await res.text();
  for (const fact of ["Roblox user ID", "Unlinking removes them", "recovery phrase", "7 days"]) {
    assert.ok(page.includes(fact), fact);
  }
});

/**
 * What a newcomer reads (issue 42): the Luau snippet beside the curl on the keys page, the
 * overview and the home page, the SDK's guide linked from the home page and the API reference,
 * the cluster a key pays on beside every key, and the invitation's button named for what it does.
 */
import assert from "node:assert/strict";
import {
  createKeyAs,
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
} from "../support/dashboard.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { createTestApp, TEST_BASE_URL } from "../support/test_app.ts";
import { LUAU_INSTALL_LINE, luauSnippetText } from "../../components/dashboard/luau_snippet.tsx";

/** Text of an HTML page with tags dropped and entities of quotes decoded, for phrase checks. */
function textOf(html: string): string {
  return html.replace(/<[^>]+>/g, " ").replace(/&quot;|&#34;/g, '"').replace(/&#39;/g, "'")
    .replace(/\s+/g, " ");
}

Deno.test("The keys page, the overview and the home page show the Luau snippet beside the curl", async () => {
  await using t = await createTestApp();
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const snippet = textOf(luauSnippetText(TEST_BASE_URL));

  // The new key's card: curl and the Luau snippet
  const created = await postForm(t.app, `/dashboard/projects/${project.id}/keys`, {
    scopes: "read,pay",
  }, { jar: dev.jar });
  const keys = textOf(
    await (await getPage(t.app, created.headers.get("location")!, dev.jar)).text(),
  );
  assert.ok(keys.includes("curl -H"), "the keys page keeps the curl example");
  assert.ok(keys.includes(snippet), keys);

  const overview = textOf(
    await (await getPage(t.app, `/dashboard/projects/${project.id}`, dev.jar)).text(),
  );
  assert.ok(overview.includes(`curl -H "x-api-key: $BLOCKLINK_KEY"`), overview);
  assert.ok(overview.includes(snippet), overview);

  const home = await (await getPage(t.app, "/")).text();
  assert.ok(textOf(home).includes(snippet), "the home page shows the snippet");
  assert.ok(home.includes('href="/docs/luau"'), "the home page links the SDK");
  const docs = await (await getPage(t.app, "/docs")).text();
  assert.ok(docs.includes('href="/docs/luau"'), "the API reference links the SDK");
  const guide = await getPage(t.app, "/docs/luau");
  assert.equal(guide.status, 200);
  const guideText = textOf(await guide.text());
  assert.ok(guideText.includes(LUAU_INSTALL_LINE), guideText);
  assert.ok(guideText.includes(snippet), guideText);
});

Deno.test("luauSnippetText() uses the SDK as it is published: its Wally line and its calls", async () => {
  const wally = await Deno.readTextFile(new URL("../../sdk/luau/wally.toml", import.meta.url));
  const name = wally.match(/^name = "(.+)"$/m)![1];
  const version = wally.match(/^version = "(.+)"$/m)![1];
  assert.equal(LUAU_INSTALL_LINE, `Blocklink = "${name}@${version}"`);
  const readme = await Deno.readTextFile(new URL("../../sdk/luau/README.md", import.meta.url));
  assert.ok(readme.includes(LUAU_INSTALL_LINE), "the SDK's README installs it the same way");
  const text = luauSnippetText(TEST_BASE_URL);
  assert.ok(readme.includes("ServerPackages.Blocklink"), "the README's require path");
  assert.ok(text.includes("ServerPackages.Blocklink"));
  assert.ok(readme.includes("`transferSol({ to, amount, idempotencyKey })`"), "the call exists");
  assert.match(text, /client:transferSol\(\{\n\t\tto = \{ userId = player\.UserId \},/);
});

Deno.test("Every key, its snippet and its creation form say which cluster it pays on", async (t) => {
  await using app = await createTestApp();
  const dev = await signInDeveloper(app.app);
  for (
    const [cluster, note] of [
      ["devnet", "Pays on devnet (test SOL)"],
      ["mainnet", "Pays on mainnet: real money"],
    ] as const
  ) {
    await t.step(cluster, async () => {
      const project = await createProjectAs(app.app, dev, { cluster });
      const empty =
        await (await getPage(app.app, `/dashboard/projects/${project.id}/keys`, dev.jar))
          .text();
      // The creation form, before any key exists
      assert.equal(empty.split(note).length - 1, 1, "beside the Create button");
      await createKeyAs(app.app, dev, project.id);
      const created = await postForm(app.app, `/dashboard/projects/${project.id}/keys`, {
        scopes: "read,pay",
      }, { jar: dev.jar });
      const page = await (await getPage(app.app, created.headers.get("location")!, dev.jar))
        .text();
      // The new key's card, both keys in the list, and the form
      assert.equal(page.split(note).length - 1, 4, page);
      if (cluster === "mainnet") assert.match(page, /badge err[^>]*>Pays on mainnet: real money/);
      const overview = await (await getPage(app.app, `/dashboard/projects/${project.id}`, dev.jar))
        .text();
      assert.ok(overview.includes(note), "the overview's snippet says it too");
    });
  }
});

Deno.test("Cancelling an invitation is labelled so, not 'Withdraw'", async () => {
  await using t = await createTestApp();
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner);
  const invited = await postJson(t.app, `/dashboard/projects/${project.id}/members`, {
    address: createTestWallet().address,
    role: "developer",
  }, { jar: owner.jar });
  assert.equal(invited.status, 201);
  const team = await (await getPage(t.app, `/dashboard/projects/${project.id}/team`, owner.jar))
    .text();
  assert.match(team, /<button type="submit" class="secondary">Cancel invitation<\/button>/);
  assert.ok(!/>Withdraw<\/button>/.test(team), "no button reads Withdraw");
});

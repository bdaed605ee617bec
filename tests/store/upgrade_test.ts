/**
 * An upgrade from the previous release, played with that release's own code: its tree is taken
 * from the repository's history at `PREVIOUS_RELEASE` and run under Deno to write a store
 * (`previous_release_writer.ts`), which this version then opens as an instance starts on it. The
 * previous release numbered its usage-ledgers step 8, the number this release's first build gave
 * the project owners: a store it left at 8 must still have its projects given their owners.
 */
import assert from "node:assert/strict";
import { ManualClock } from "../../core/clock.ts";
import { getMemberEntry } from "../../kv/members.ts";
import { getStoreVersionEntry } from "../../kv/store_version.ts";
import { checkSecret } from "../../lib/crypto/key_check.ts";
import { migrateStore } from "../../lib/migrations/mod.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { getPage, postJson, signInDeveloper } from "../support/dashboard.ts";
import { createTestApp } from "../support/test_app.ts";
import { checkOutRelease, run } from "../support/release_tree.ts";

/** The last release before the project owners' step: main's tip when its store version 8 was the usage ledgers. */
const PREVIOUS_RELEASE = "ea02a68faedab836e3f7bb713dc6e0a5bfc59b68";
const SECRET = "upgrade-secret-aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const HOUR_MS = 3_600_000;

Deno.test("An upgrade from the previous release keeps every creator the owner of their projects, however old", async () => {
  const tree = await checkOutRelease(PREVIOUS_RELEASE, [
    "tests/store/previous_release_writer.ts",
  ]);
  const kvPath = `${tree}/store.kv`;
  await using _cleanup = {
    [Symbol.asyncDispose]: () => Deno.remove(tree, { recursive: true }),
  };
  const creators = [createTestWallet(), createTestWallet()];

  // Given: the previous release's instance migrated the store and created a project of each
  // creator, a day and two hours ago (beyond any sweep of a deploy's overlap).
  const write = (ageMs: number, wallet: { address: string }) =>
    run("deno", [
      "run",
      "-A",
      "--unstable-kv",
      "--unstable-cron",
      "tests/store/previous_release_writer.ts",
      kvPath,
      SECRET,
      String(ageMs),
      wallet.address,
    ], tree).then((out) => JSON.parse(out.trim().split("\n").at(-1)!)[0] as { id: string });
  const projects = [
    await write(24 * HOUR_MS, creators[0]!),
    await write(2 * HOUR_MS, creators[1]!),
  ];

  // When: an instance of this version starts on the store.
  await using t = await createTestApp({
    kvPath,
    clock: new ManualClock(Date.now()),
    config: { secret: SECRET },
  });
  await migrateStore(t.ctx);
  await checkSecret(t.ctx);

  // Then: the migration made each creator the owner, before anyone asked for the project, and left
  // the store's number as that release wrote it (its instances' sweep stays idle).
  assert.equal((await getStoreVersionEntry(t.kv))?.version, 8);
  for (const [i, project] of projects.entries()) {
    const member = (await getMemberEntry(t.kv, project.id, creators[i]!.address)).value;
    assert.equal(member?.role, "owner", `project ${i}'s creator owns it`);
  }
  // And: each creator opens their project and manages its team; someone else gets nothing.
  const outsider = await signInDeveloper(t.app);
  for (const [i, project] of projects.entries()) {
    const creator = await signInDeveloper(t.app, creators[i]!);
    const page = await getPage(t.app, `/dashboard/projects/${project.id}`, creator.jar);
    assert.equal(page.status, 200, `project ${i}'s page`);
    await page.body?.cancel();
    const invited = await postJson(t.app, `/dashboard/projects/${project.id}/members`, {
      address: createTestWallet().address,
      role: "viewer",
    }, { jar: creator.jar });
    assert.equal(invited.status, 201, await invited.text());
    const refused = await getPage(t.app, `/dashboard/projects/${project.id}`, outsider.jar);
    assert.equal(refused.status, 404);
    await refused.body?.cancel();
  }
});

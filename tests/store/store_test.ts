import assert from "node:assert/strict";
import { createTestApp } from "../support/test_app.ts";
import { assertOneOwnerAfterRace } from "../support/link_race.ts";
import { getLinkByAddress, getLinkByUser, linkWallet, unlinkWallet } from "../../kv/links.ts";
import {
  createProject,
  deleteProject,
  getActiveProjectBySlug,
  listProjectsByDeveloper,
  ProjectLimitError,
  slugify,
  updateProject,
} from "../../kv/projects.ts";
import { createApiKey, KeyLimitError, listApiKeys, revokeApiKey } from "../../kv/api_keys.ts";

const A = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const B = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";
const DEV = "Dev1111111111111111111111111111111111111111";

Deno.test("linkWallet() follows the link rules and reports who lost what", async (t) => {
  await using env = await createTestApp();
  const kv = env.kv;
  await t.step("a first link replaces nothing", async () => {
    const out = await linkWallet(kv, "p1", { userId: 1, address: A, now: 10 });
    assert.deepEqual(out, {
      link: { address: A, linkedAt: 10 },
      replacedAddress: null,
      previousOwner: null,
    });
  });
  await t.step("the same wallet again is a plain relink", async () => {
    const out = await linkWallet(kv, "p1", { userId: 1, address: A, now: 11 });
    assert.deepEqual([out.replacedAddress, out.previousOwner], [null, null]);
  });
  await t.step("a new wallet replaces the player's previous one", async () => {
    const out = await linkWallet(kv, "p1", { userId: 1, address: B, now: 12 });
    assert.deepEqual([out.replacedAddress, out.previousOwner], [A, null]);
    assert.deepEqual(await getLinkByAddress(kv, "p1", A), null);
  });
  await t.step("another player takes the wallet from its owner", async () => {
    const out = await linkWallet(kv, "p1", { userId: 2, address: B, now: 13 });
    assert.deepEqual([out.replacedAddress, out.previousOwner], [null, 1]);
    assert.deepEqual(await getLinkByUser(kv, "p1", 1), null);
    assert.deepEqual(await getLinkByAddress(kv, "p1", B), { userId: 2, linkedAt: 13 });
  });
  await t.step("links belong to one project", async () => {
    const out = await linkWallet(kv, "p2", { userId: 9, address: B, now: 14 });
    assert.deepEqual(out.previousOwner, null);
    assert.deepEqual((await getLinkByUser(kv, "p1", 2))?.address, B);
  });
  await t.step("unlink answers what was removed, then nothing", async () => {
    assert.deepEqual(await unlinkWallet(kv, "p1", 2), B);
    assert.deepEqual(await unlinkWallet(kv, "p1", 2), null);
    assert.deepEqual(await getLinkByAddress(kv, "p1", B), null);
  });
});

Deno.test("linkWallet() leaves one owner when many players take one wallet at once", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using a = await createTestApp({ kvPath: path });
  await using b = await createTestApp({ kvPath: path });
  await assertOneOwnerAfterRace([a.kv, b.kv], A);
  await Deno.remove(path);
});

Deno.test("createProject() derives a unique slug that survives renames and deletion", async () => {
  await using env = await createTestApp();
  const kv = env.kv;
  assert.deepEqual(slugify("  Ünïcode Obby!! 2 "), "unicode-obby-2");
  assert.deepEqual(slugify("!!!"), "game");
  const one = await createProject(kv, {
    name: "Tycoon",
    cluster: "devnet",
    createdBy: DEV,
    now: 1,
  });
  const two = await createProject(kv, {
    name: "tycoon",
    cluster: "mainnet",
    createdBy: "other",
    now: 2,
  });
  assert.deepEqual(one.slug, "tycoon");
  assert.ok(/^tycoon-[a-z0-9]{6}$/.test(two.slug), two.slug);
  await updateProject(kv, one.id, (p) => ({ ...p, name: "Renamed" }));
  assert.deepEqual((await getActiveProjectBySlug(kv, "tycoon"))?.name, "Renamed");
  await deleteProject(kv, one.id, 3);
  assert.deepEqual(await getActiveProjectBySlug(kv, "tycoon"), null);
  const three = await createProject(kv, {
    name: "Tycoon",
    cluster: "devnet",
    createdBy: DEV,
    now: 4,
  });
  assert.ok(/^tycoon-[a-z0-9]{6}$/.test(three.slug) && three.slug !== two.slug, three.slug);
});

Deno.test("createProject() allows 5 active projects per developer, even concurrently", async () => {
  await using env = await createTestApp();
  const results = await Promise.allSettled(
    Array.from(
      { length: 8 },
      (_, i) => createProject(env.kv, { name: `g${i}`, cluster: "devnet", createdBy: DEV, now: i }),
    ),
  );
  assert.deepEqual(results.filter((r) => r.status === "fulfilled").length, 5);
  assert.ok(
    results.every((r) => r.status === "fulfilled" || r.reason instanceof ProjectLimitError),
  );
  const mine = await listProjectsByDeveloper(env.kv, DEV);
  assert.deepEqual(mine.length, 5);
  const [one] = mine;
  assert.ok(one);
  await deleteProject(env.kv, one.id, 9);
  await createProject(env.kv, { name: "again", cluster: "devnet", createdBy: DEV, now: 10 });
});

Deno.test("createApiKey() allows 10 active keys per project, even concurrently", async () => {
  await using env = await createTestApp();
  const results = await Promise.allSettled(
    Array.from({ length: 14 }, () => createApiKey(env.kv, "p", 1)),
  );
  assert.deepEqual(results.filter((r) => r.status === "fulfilled").length, 10);
  assert.ok(results.every((r) => r.status === "fulfilled" || r.reason instanceof KeyLimitError));
  await assert.rejects(() => createApiKey(env.kv, "p", 2), KeyLimitError);
  const [first] = await listApiKeys(env.kv, "p", env.clock.now());
  assert.ok(first);
  assert.ok(await revokeApiKey(env.kv, "p", first.id, 3));
  await createApiKey(env.kv, "p", 4);
});

// Keys and endpoints made before makers were recorded get them from the audit log on upgrade, so
// removing that member withdraws them too (lib/migrations/makers_from_audit.ts).
import assert from "node:assert/strict";
import { createKeyAs, createProjectAs, postJson, signInDeveloper } from "../support/dashboard.ts";
import { joinTeam } from "../support/team.ts";
import { call, createTestApp } from "../support/test_app.ts";
import { apiKeyKey, type ApiKeyRecord } from "../../kv/api_keys.ts";
import { migratePreviousVersionWrites, migrateStore } from "../../lib/migrations/mod.ts";

/** The record as the previous release stored it: no maker. */
async function forgetMaker(kv: Deno.Kv, projectId: string, keyId: string): Promise<void> {
  const entry = await kv.get<ApiKeyRecord>(apiKeyKey(projectId, keyId));
  const { createdBy: _made, ...old } = entry.value!;
  await kv.set(entry.key, old);
}

Deno.test("A key made before makers were recorded is given its maker from the audit log, and goes with them", async () => {
  await using t = await createTestApp();
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner);
  const dev = await joinTeam(t.app, owner, project.id, "developer");
  const key = await createKeyAs(t.app, dev, project.id);
  await forgetMaker(t.kv, project.id, key.id);
  await t.kv.delete(["migrations_applied", "makers_from_audit"]);

  // When the store is migrated
  assert.deepEqual(await migrateStore({ kv: t.kv, clock: t.clock, keys: t.ctx.keys }), []);

  // Then the key names its maker, and removing the maker revokes it
  const record = (await t.kv.get<ApiKeyRecord>(apiKeyKey(project.id, key.id))).value!;
  assert.equal(record.createdBy, dev.address);
  const removed = await postJson(
    t.app,
    `/dashboard/projects/${project.id}/members/${dev.address}/remove`,
    {},
    { jar: owner.jar },
  );
  assert.equal(removed.status, 200);
  const res = await call(t.app, "/v1/project", { apiKey: key.key });
  assert.equal(res.status, 401);
  await res.body?.cancel();
});

Deno.test("During a deploy's overlap the minute sweep names the maker of a key the previous version makes", async () => {
  await using t = await createTestApp();
  const owner = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, owner);
  // Given a store this version migrated, then a key the previous version made, without its maker
  const deps = { kv: t.kv, clock: t.clock, keys: t.ctx.keys };
  await migrateStore(deps);
  t.clock.advance(60_000);
  const key = await createKeyAs(t.app, owner, project.id);
  await forgetMaker(t.kv, project.id, key.id);
  // When the minute sweep runs
  await migratePreviousVersionWrites(deps);
  // Then the key names its maker
  const record = (await t.kv.get<ApiKeyRecord>(apiKeyKey(project.id, key.id))).value!;
  assert.equal(record.createdBy, owner.address);
});

/**
 * Runs inside a copy of the previous release's tree (`upgrade_test.ts` puts it there), so every
 * module below is that release's own: writes the store at `kvPath` as an instance of that release
 * leaves it (migrated by its steps, its SECRET checked), with one project of each creator made
 * `ageMs` ago. Prints the projects as JSON.
 *
 * Arguments: kvPath, secret, ageMs, then the creators' addresses.
 */
import { ManualClock } from "../../core/clock.ts";
import { checkSecret } from "../../lib/crypto/key_check.ts";
import { migrateStore } from "../../lib/migrations/mod.ts";
import { createTestApp, createTestProject } from "../support/test_app.ts";

const [kvPath, secret, ageMs, ...creators] = Deno.args;
await using app = await createTestApp({
  kvPath,
  clock: new ManualClock(Date.now() - Number(ageMs)),
  config: { secret },
});
await migrateStore(app.ctx);
await checkSecret(app.ctx);
const projects = [];
for (const developer of creators) {
  const { project } = await createTestProject(app, { developer });
  projects.push({ id: project.id, createdBy: project.createdBy, createdAt: project.createdAt });
}
console.log(JSON.stringify(projects));

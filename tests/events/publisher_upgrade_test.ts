/**
 * A rolling deploy of the publisher: an instance of the release before it, run with that release's
 * own code (`../support/release_tree.ts`), shares the store with this version's instances and must
 * leave the publisher's loop to them (it knows no `publish_events` and would drop the loop).
 */
import assert from "node:assert/strict";
import { listJobs } from "../../kv/jobs.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import { checkOutRelease, run } from "../support/release_tree.ts";
import { drain, startEventsHarness } from "../support/events_harness.ts";

/** Main's tip before the publisher. */
const PREVIOUS_RELEASE = "489881690af110bea19faa1bc2dabc2bae3c48f3";
const WORKER = "tests/events/previous_release_worker.ts";

Deno.test("An instance of the release before the publisher never claims a publisher loop", async () => {
  const tree = await checkOutRelease(PREVIOUS_RELEASE, [WORKER]);
  await using _cleanup = {
    [Symbol.asyncDispose]: () => Deno.remove(tree, { recursive: true }),
  };
  const kvPath = `${tree}/store.kv`;
  await using h = await startEventsHarness({ kvPath });
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
  // Given: a packing project's event, its publisher loop due.
  await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 1 }]);

  // When: an instance of the previous release runs every job due.
  const args = ["run", "-A", "--unstable-kv", "--unstable-cron", WORKER];
  await run("deno", [...args, kvPath, String(h.a.clock.now())], tree);

  // Then: the loop was never claimed, and this version's worker publishes the event.
  const jobs = await listJobs(h.a.kv);
  assert.deepEqual(jobs.map((job) => [job.payload.type, job.attempts, job.lease]), [
    ["publish_events", 0, null],
  ]);
  await drain(h.a.worker);
  assert.deepEqual(h.standIn.inbox().map((m) => m.message), [
    '{"v":1,"type":"ping","id":"1","at":1}',
  ]);
});

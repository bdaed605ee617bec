/**
 * Stores written by earlier versions keep working after an upgrade: what they hold is moved to
 * the current layout by the instances that start on them, several at once, without loss or double
 * work.
 */
import assert from "node:assert/strict";
import { openKv } from "../../kv/open_kv.ts";
import type { JobRecord } from "../../kv/jobs.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import { startService } from "../../service.ts";
import { startMessagingStandIn } from "../../sandbox/roblox/mod.ts";
import { createTestApp, createTestProject, testConfig } from "../support/test_app.ts";
import { PUBLISH_KEY, UNIVERSE } from "../support/events_harness.ts";

/** Starts `count` service instances on the store at `kvPath` at the same time; returns a closer. */
async function startInstances(
  kvPath: string,
  count: number,
  config: Parameters<typeof testConfig>[0],
): Promise<() => Promise<void>> {
  const started = await Promise.all(
    Array.from({ length: count }, async () => {
      const kv = await openKv(kvPath);
      const service = await startService({
        kv,
        hostname: "127.0.0.1",
        config: testConfig({ ...config, port: 0, kvPath }),
      });
      return { kv, service };
    }),
  );
  return async () => {
    for (const { kv, service } of started) {
      await service.close();
      kv.close();
    }
  };
}

Deno.test("Deliveries queued by earlier versions run once after the upgrade, with two instances starting together", async () => {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const standIn = await startMessagingStandIn({
    keys: [{ apiKey: PUBLISH_KEY, universeId: UNIVERSE }],
  });
  try {
    // Given: a project with events on, and one delivery queued in each due index of earlier
    // versions: `["job_queue", lane, runAt, id]` (lanes) and `["jobs_due", runAt, id]` (before).
    const runAt = Date.now() - 1_000;
    {
      await using app = await createTestApp({ kvPath });
      const { project } = await createTestProject(app);
      await saveEventSettings(app.ctx, project.id, {
        universeId: UNIVERSE,
        publishingKey: PUBLISH_KEY,
      });
      const old = (id: string, at: number, lane?: "events"): JobRecord => ({
        id,
        payload: {
          type: "deliver_event",
          projectId: project.id,
          event: { type: "ping", at, id: String(at), createdAt: runAt },
        },
        ...(lane ? { lane } : {}),
        status: "pending",
        runAt,
        attempts: 0,
        lease: null,
        unique: false,
        createdAt: runAt,
        lastError: null,
        doneAt: null,
      });
      await app.kv.atomic()
        .set(["jobs", "01OLDLANES0000000000000000"], old("01OLDLANES0000000000000000", 1, "events"))
        .set(["job_queue", "events", runAt, "01OLDLANES0000000000000000"], project.id)
        .set(["jobs", "01OLDER0000000000000000000"], old("01OLDER0000000000000000000", 2))
        .set(["jobs_due", runAt, "01OLDER0000000000000000000"], project.id)
        .commit();
    }

    // When: two instances of this version start on the store at once.
    const close = await startInstances(kvPath, 2, { publishUrl: standIn.url });
    try {
      // Then: each delivery reaches the game, once.
      await standIn.waitForMessages(2, 10_000);
      await new Promise((r) => setTimeout(r, 1_500));
      const pings = standIn.inbox().map((m) => (m.data as { at: number }).at).sort();
      assert.deepEqual(pings, [1, 2]);
    } finally {
      await close();
    }
  } finally {
    await standIn.close();
    await Deno.remove(kvPath).catch(() => {});
  }
});

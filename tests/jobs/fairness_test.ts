/**
 * Fair background work at any backlog (issue 22, item 1): one project's backlog, however long,
 * never holds another project's events back, and one developer account's projects together never
 * hold more than half of a lane's slots.
 */
import assert from "node:assert/strict";
import { addEventJob } from "../../lib/events/job_payloads.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import { listJobs } from "../../kv/jobs.ts";
import { jobHandlers } from "../../jobs/handlers.ts";
import type { JobHandlers } from "../../jobs/handlers.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { JobOwners, pickDueJobs } from "../../jobs/due_picker.ts";
import { handOverTo } from "../support/team.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { okJson, PUBLISH_KEY, startTxHarness, UNIVERSE } from "../support/tx_harness.ts";
import { createTestApp, createTestProject } from "../support/test_app.ts";
import { until } from "../support/assertions.ts";

const BACKLOG = 50_000;
// Jobs per seeding commit: three mutations each (record, queue entry, marker), far under 1,000.
const SEED_BATCH = 300;
const FLOODER = "F1ood111111111111111111111111111111111111111";

/** Queues `count` deliveries of recorded pings for `projectId`, all due at `runAt`, in batched commits. */
async function seedDeliveries(
  kv: Deno.Kv,
  projectId: string,
  options: { count: number; runAt: number },
): Promise<void> {
  for (let first = 0; first < options.count; first += SEED_BATCH) {
    const op = kv.atomic();
    for (let i = first; i < Math.min(options.count, first + SEED_BATCH); i++) {
      const event = { type: "ping" as const, at: i, id: String(i + 1), createdAt: options.runAt };
      addEventJob(op, { type: "deliver_event", projectId, event }, { runAt: options.runAt });
    }
    assert.ok((await op.commit()).ok);
  }
}

Deno.test("A project's tx event is delivered within 5 s while another project has 50,000 deliveries due", async () => {
  await using h = await startTxHarness({ store: "file" });
  await h.policy({ maxSolPerTransfer: "1" });
  await h.link(7);
  // Given: another developer's project has 50,000 deliveries due, all queued before this
  // project's event, and the worker (every instance's loop, with its default slots) is on them.
  const flooding = (await createTestProject(h.a, { developer: FLOODER })).project;
  await saveEventSettings(h.a.ctx, flooding.id, {
    universeId: UNIVERSE,
    publishingKey: PUBLISH_KEY,
  });
  await seedDeliveries(h.a.kv, flooding.id, { count: BACKLOG, runAt: h.a.clock.now() - 1_000 });
  h.a.worker.start();
  await until(() => h.standIn.inbox().length >= 50, 20_000, "the backlog's first deliveries");

  // When: a payout of this project confirms, which records its `tx` event.
  const answer = await okJson(
    await h.a.post("transfer-sol", { to: { userId: 7 }, amount: "0.1", idempotencyKey: "fair" }),
  );
  const answeredAt = performance.now();
  assert.equal(answer.status, "confirmed");

  // Then: the event reaches the game within 5 s, while most of the backlog still waits.
  const isOurs = (data: unknown) => (data as { key?: string }).key === "fair";
  await until(
    () => h.standIn.inbox().some((m) => isOurs(m.data)),
    5_000,
    "this project's tx event",
  );
  const latencyMs = performance.now() - answeredAt;
  assert.ok(latencyMs < 5_000, `delivered after ${latencyMs} ms`);
  await h.a.worker.stop();
  const waiting = (await listJobs(h.a.kv)).filter((j) => j.payload.projectId === flooding.id);
  assert.ok(waiting.length > BACKLOG / 2, `${waiting.length} of the backlog still waiting`);
});

Deno.test("One developer's projects together hold at most half of a lane's slots", async () => {
  await using app = await createTestApp();
  const release = Promise.withResolvers<void>();
  const running = new Map<string, number>();
  let most = 0;
  const handlers: JobHandlers = {
    ...jobHandlers,
    deliver_event: async (run) => {
      const projectId = run.payload.projectId;
      running.set(projectId, (running.get(projectId) ?? 0) + 1);
      most = Math.max(most, [...running.values()].reduce((a, b) => a + b, 0));
      await release.promise;
      running.set(projectId, (running.get(projectId) ?? 0) - 1);
      return { kind: "done" };
    },
  };
  const worker = new JobWorker(app.ctx, { handlers, concurrency: 8, pollIntervalMs: 50 });
  try {
    // Given: one developer's three projects each have 6 deliveries whose publish hangs.
    const busy = await Promise.all(
      [1, 2, 3].map(async () => (await createTestProject(app, { developer: FLOODER })).project),
    );
    for (const project of busy) {
      await seedDeliveries(app.kv, project.id, { count: 6, runAt: app.clock.now() - 1_000 });
    }
    worker.start();
    await until(() => most >= 4, 5_000, "the busy developer's deliveries to start");
    await new Promise((r) => setTimeout(r, 300));

    // When: another developer's project has a delivery due.
    const other = (await createTestProject(app)).project;
    await seedDeliveries(app.kv, other.id, { count: 1, runAt: app.clock.now() });
    app.ctx.jobWaker.wake();

    // Then: it runs while the busy developer's still hang; those never held more than 4 of 8.
    await until(() => (running.get(other.id) ?? 0) === 1, 5_000, "the other developer's delivery");
    const busyRunning = busy.reduce((sum, p) => sum + (running.get(p.id) ?? 0), 0);
    assert.equal(busyRunning, 4);
  } finally {
    release.resolve();
    await worker.stop();
  }
});

Deno.test("A developer's own projects take its slots in turn", async () => {
  await using app = await createTestApp();
  const ran: string[] = [];
  const handlers: JobHandlers = {
    ...jobHandlers,
    deliver_event: async (run) => {
      ran.push(run.payload.projectId);
      await new Promise((r) => setTimeout(r, 2));
      return { kind: "done" };
    },
  };
  const worker = new JobWorker(app.ctx, { handlers, pollIntervalMs: 50 });
  try {
    // Given: one of the developer's projects has 2,000 deliveries due and the worker is on them.
    const busy = (await createTestProject(app, { developer: FLOODER })).project;
    const quiet = (await createTestProject(app, { developer: FLOODER })).project;
    await seedDeliveries(app.kv, busy.id, { count: 2_000, runAt: app.clock.now() - 1_000 });
    worker.start();
    await until(() => ran.length >= 20, 5_000, "the backlog to start");

    // When: the developer's other project has a delivery due.
    await seedDeliveries(app.kv, quiet.id, { count: 1, runAt: app.clock.now() });
    const before = ran.length;
    app.ctx.jobWaker.wake();

    // Then: it runs within a few turns, not after the backlog.
    await until(() => ran.includes(quiet.id), 5_000, "the quiet project's delivery");
    const waited = ran.indexOf(quiet.id) - before;
    assert.ok(waited < 20, `${waited} of the backlog ran first`);
  } finally {
    await worker.stop();
  }
});

Deno.test("A project handed over takes its jobs' slots from its new owner's share of a lane", async () => {
  await using app = await createTestApp();
  const heir = createTestWallet().address;
  const owners = new JobOwners(app.kv, app.clock);
  // Given: the heir's own project has a delivery running (their whole share, one slot), and a
  // project another developer created has a delivery due.
  const own = (await createTestProject(app, { developer: heir })).project;
  const handed = (await createTestProject(app, { developer: FLOODER })).project;
  await seedDeliveries(app.kv, handed.id, { count: 1, runAt: app.clock.now() - 1_000 });
  const pick = async () => {
    const running = new Map([["running", { projectId: own.id, owner: await owners.of(own.id) }]]);
    const { picks } = await pickDueJobs(app.kv, "events", {
      now: app.clock.now(),
      free: 4,
      perOwner: 1,
      running,
      owners,
      scan: 100,
    });
    return picks.map((p) => p.job.projectId);
  };
  assert.deepEqual(await pick(), [handed.id]);

  // When: the project is handed over to the heir, and the worker's memory of owners (10 s) ends.
  await handOverTo(app.ctx, handed, heir);
  app.clock.advance(10_000);

  // Then: its delivery waits for a slot of the heir's share.
  assert.deepEqual(await pick(), []);
});

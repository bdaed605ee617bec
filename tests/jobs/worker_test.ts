import assert from "node:assert/strict";
import { claimJob, enqueueJob, getJobEntry, type JobRecord, listJobs } from "../../kv/jobs.ts";
import { jobHandlers } from "../../jobs/handlers.ts";
import { addEventJob } from "../../lib/events/job_payloads.ts";
import { runWorkerKick } from "../../jobs/cron.ts";
import type { JobHandlers } from "../../jobs/handlers.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { listDeliveries } from "../../kv/deliveries.ts";
import { drain, startEventsHarness } from "../support/events_harness.ts";
import { createTestApp } from "../support/test_app.ts";

const ping = (at: number) => ({ type: "ping" as const, at });
// A ping as the feed records it, for jobs added by hand.
const recordedPing = (at: number) => ({ ...ping(at), id: String(at), createdAt: at });

Deno.test("enqueueJob() with an id adds the job once, and the id stays taken after it finishes", async () => {
  await using h = await startEventsHarness();
  const job = { type: "deliver_event" as const, projectId: h.project.id, event: recordedPing(1) };

  // When
  const first = await enqueueJob(h.a.kv, job, {
    id: "once",
    runAt: h.a.clock.now(),
    lane: "events",
  });
  const again = await enqueueJob(h.a.kv, job, {
    id: "once",
    runAt: h.a.clock.now(),
    lane: "events",
  });
  await drain(h.a.worker);
  const afterDone = await enqueueJob(h.a.kv, job, {
    id: "once",
    runAt: h.a.clock.now(),
    lane: "events",
  });

  // Then
  assert.equal(first, "once");
  assert.equal(again, null);
  assert.equal(afterDone, null);
  assert.equal(h.standIn.inbox().length, 1);
  assert.equal((await getJobEntry(h.a.kv, "once")).value?.status, "done");
});

Deno.test("addEventJob() lands only with the caller's commit", async (s) => {
  await using t = await createTestApp();
  const job = { type: "deliver_event" as const, projectId: "p1", event: recordedPing(1) };

  await s.step("a commit whose check fails adds no job", async () => {
    const op = t.kv.atomic().check({ key: ["guard"], versionstamp: "00000000000000010000" });
    addEventJob(op, job, { runAt: 5 });
    assert.equal((await op.commit()).ok, false);
    assert.deepEqual(await listJobs(t.kv), []);
  });

  await s.step("a successful commit adds the job with the caller's change", async () => {
    const op = t.kv.atomic().set(["guard"], 1);
    const id = addEventJob(op, job, { runAt: 5 });
    assert.equal((await op.commit()).ok, true);
    const jobs = await listJobs(t.kv);
    assert.deepEqual(jobs.map((j) => [j.id, j.runAt, j.payload.type]), [[id, 5, "deliver_event"]]);
  });

  await s.step("an invalid payload is refused before it reaches the store", () => {
    const op = t.kv.atomic();
    assert.throws(() =>
      addEventJob(op, { ...job, event: { type: "ping", at: "soon" } } as never, { runAt: 5 })
    );
  });
});

Deno.test("JobWorker commits a handler's effects in the same commit as the job's end", async (t) => {
  await using app = await createTestApp();
  const handlers: JobHandlers = {
    ...jobHandlers,
    deliver_event: (run) => {
      run.op.set(["effects", run.id], run.attempt);
      if (run.payload.event.type === "ping" && run.payload.event.at === 2) {
        // A check that fails: neither the effect nor the completion may land.
        run.op.check({ key: ["never"], versionstamp: "00000000000000010000" });
      }
      return Promise.resolve({ kind: "done" });
    },
  };
  const worker = new JobWorker(app.ctx, { handlers });
  const job = (at: number) => ({
    type: "deliver_event" as const,
    projectId: "p",
    event: recordedPing(at),
  });

  await t.step("effect and completion land together", async () => {
    const id = (await enqueueJob(app.kv, job(1), { runAt: app.clock.now(), lane: "events" }))!;
    assert.equal(await worker.runDue(), 1);
    assert.equal((await app.kv.get(["effects", id])).value, 1);
    assert.equal((await getJobEntry(app.kv, id)).value, null);
  });

  await t.step(
    "when the commit fails, neither lands and the job is released to run again",
    async () => {
      const id = (await enqueueJob(app.kv, job(2), { runAt: app.clock.now(), lane: "events" }))!;
      assert.equal(await worker.runDue(), 1);
      assert.equal((await app.kv.get(["effects", id])).value, null);
      const left = (await getJobEntry(app.kv, id)).value!;
      assert.deepEqual([left.lease, left.attempts, left.runAt], [null, 1, app.clock.now() + 1_000]);
    },
  );
});

Deno.test("JobWorker retries a throwing handler with growing waits, then drops the job", async () => {
  await using app = await createTestApp();
  let runs = 0;
  const handlers: JobHandlers = {
    ...jobHandlers,
    deliver_event: () => {
      runs++;
      throw new Error("Boom");
    },
  };
  const worker = new JobWorker(app.ctx, { handlers, maxAttempts: 3 });
  const id = (await enqueueJob(app.kv, {
    type: "deliver_event",
    projectId: "p",
    event: recordedPing(1),
  }, { runAt: app.clock.now(), lane: "events" }))!;

  assert.equal(await worker.runDue(), 1);
  assert.equal((await getJobEntry(app.kv, id)).value?.lastError, "Boom");
  app.clock.advance(999);
  assert.equal(await worker.runDue(), 0, "the first wait is 1 s");
  app.clock.advance(1);
  assert.equal(await worker.runDue(), 1);
  app.clock.advance(1_999);
  assert.equal(await worker.runDue(), 0, "the second wait is 2 s");
  app.clock.advance(1);
  assert.equal(await worker.runDue(), 1);

  assert.equal(runs, 3);
  assert.equal((await getJobEntry(app.kv, id)).value, null, "dropped after 3 attempts");
});

Deno.test("A job whose instance died mid-run is run by another instance once its lease ends", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using h = await startEventsHarness({ kvPath: path });
  const b = await h.instance({ owner: "b" });

  // Given: instance A claimed the delivery and died before finishing it.
  await recordEvents(h.a.ctx, h.project.id, [ping(7)]);
  const [job] = await listJobs(h.a.kv);
  assert.ok(job);
  const entry = await getJobEntry(h.a.kv, job.id);
  const claimed = await claimJob(h.a.kv, entry as Deno.KvEntry<JobRecord>, {
    owner: "a",
    now: h.a.clock.now(),
    leaseMs: 30_000,
  });
  assert.ok(claimed);

  // When / Then: B leaves it alone while the lease holds, then runs it.
  assert.equal(await b.worker.runDue(), 0);
  h.a.clock.advance(29_999);
  assert.equal(await b.worker.runDue(), 0);
  h.a.clock.advance(1);
  assert.equal(await b.worker.runDue(), 1);
  assert.deepEqual(h.standIn.inbox().map((m) => m.data), [{ v: 1, type: "ping", id: "1", at: 7 }]);
  assert.deepEqual(await listJobs(h.a.kv), []);
  const [delivery] = await listDeliveries(h.a.kv, h.project.id);
  assert.ok(delivery);
  assert.deepEqual([delivery.outcome, delivery.attempts], ["delivered", 2]);
});

Deno.test("Two instances on one KV file deliver each event once", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using h = await startEventsHarness({ kvPath: path });
  const b = await h.instance({ owner: "b" });

  // Given
  for (let i = 0; i < 40; i++) {
    await recordEvents(i % 2 ? h.a.ctx : b.ctx, h.project.id, [ping(i)]);
  }

  // When: both workers run their passes at the same time.
  await drain(h.a.worker, b.worker);

  // Then
  const ats = h.standIn.inbox().map((m) => (m.data as { at: number }).at).sort((x, y) => x - y);
  assert.deepEqual(ats, Array.from({ length: 40 }, (_, i) => i));
  assert.equal(h.standIn.attempts().length, 40);
});

Deno.test("JobWorker.start() runs new work as soon as it is woken, and stop() ends the loop", async () => {
  await using h = await startEventsHarness({ worker: { pollIntervalMs: 60_000 } });
  await recordEvents(h.a.ctx, h.project.id, [ping(1)]);
  h.a.worker.start();
  // The pass at start delivers the first event; after it the loop sleeps for 60 s.
  await h.standIn.waitForMessages(1, 5_000);

  // When
  await recordEvents(h.a.ctx, h.project.id, [ping(2)]);

  // Then: delivered long before the next poll, because publishing woke the worker.
  const messages = await h.standIn.waitForMessages(2, 5_000);
  assert.deepEqual(messages[1]?.data, { v: 1, type: "ping", id: "2", at: 2 });
  await h.a.worker.stop();
  assert.equal(h.a.worker.running, false);
});

Deno.test("runWorkerKick() runs the sweeps and due jobs when no loop runs in the instance", async () => {
  await using h = await startEventsHarness();
  await recordEvents(h.a.ctx, h.project.id, [ping(3)]);

  await runWorkerKick(h.a.ctx, h.a.worker, { busyForMs: 0 });

  assert.deepEqual(h.standIn.inbox().map((m) => m.data), [{ v: 1, type: "ping", id: "1", at: 3 }]);
});

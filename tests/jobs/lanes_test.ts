/**
 * Background work in the right order, on time, for everyone: priority lanes, slow jobs that hold
 * up nothing else, exact retry waits, and leases renewed under long jobs.
 */
import assert from "node:assert/strict";
import { enqueueJob, getJobEntry, listJobs } from "../../kv/jobs.ts";
import { jobHandlers } from "../../jobs/handlers.ts";
import type { JobHandlers } from "../../jobs/handlers.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { ManualClock } from "../../core/clock.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { RETRY_DELAYS_MS } from "../../lib/events/deliver.ts";
import { startEventsHarness } from "../support/events_harness.ts";
import { createTestApp } from "../support/test_app.ts";
import { until } from "../support/assertions.ts";
import { txConfirmJobSchema } from "../../lib/tx/job_payloads.ts";

/** A clock that follows real time, for the few tests about real waits. */
class RealClock extends ManualClock {
  override now(): number {
    return Date.now();
  }
}

// A delivery job carries the event as the feed recorded it.
const ping = (at: number) => ({ type: "ping" as const, at, id: String(at + 1), createdAt: at });
const txCheck = (key: string) => ({
  type: "tx_confirm" as const,
  projectId: "p",
  key,
  attemptId: "a",
});

Deno.test("recordEvents() makes the delivery due now, not at time 0", async () => {
  await using h = await startEventsHarness();
  await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 1 }]);
  const [job] = await listJobs(h.a.kv);
  assert.ok(job);
  assert.equal(job.runAt, h.a.clock.now());
});

Deno.test("JobWorker runs a due confirmation check before a backlog of deliveries and polls", async () => {
  await using app = await createTestApp();
  const order: string[] = [];
  const handlers: JobHandlers = {
    ...jobHandlers,
    deliver_event: () => (order.push("deliver"), Promise.resolve({ kind: "done" })),
    watch_poll: () => (order.push("poll"), Promise.resolve({ kind: "done" })),
    tx_confirm: () => (order.push("check"), Promise.resolve({ kind: "done" })),
  };
  const worker = new JobWorker(app.ctx, { handlers, batchSize: 20 });
  // Given: 100 deliveries and 100 polls were due earlier than the confirmation check.
  for (let i = 0; i < 100; i++) {
    await enqueueJob(app.kv, { type: "deliver_event", projectId: "p", event: ping(i) }, {
      runAt: app.clock.now() - 1_000,
      lane: "events",
    });
    await enqueueJob(app.kv, { type: "watch_poll", projectId: "p", watchId: `w${i}` }, {
      runAt: app.clock.now() - 1_000,
      lane: "watch",
    });
  }
  await enqueueJob(app.kv, txCheck("k"), { runAt: app.clock.now(), lane: "tx" });

  // When: one pass runs.
  await worker.runDue();

  // Then: the check ran first.
  assert.equal(order[0], "check");
});

Deno.test("JobWorker.start(): slow jobs do not hold up other due jobs", async () => {
  await using app = await createTestApp();
  const release = Promise.withResolvers<void>();
  const ran: string[] = [];
  const handlers: JobHandlers = {
    ...jobHandlers,
    deliver_event: async (run) => {
      ran.push(`deliver:${run.payload.projectId}`);
      if (run.payload.projectId === "slow") await release.promise;
      return { kind: "done" };
    },
    watch_poll: async () => {
      ran.push("poll");
      await release.promise;
      return { kind: "done" };
    },
    tx_confirm: () => (ran.push("check"), Promise.resolve({ kind: "done" })),
  };
  const worker = new JobWorker(app.ctx, { handlers, pollIntervalMs: 50 });
  try {
    // Given: a slow project's deliveries (a hung publish each) and a slow poll are running.
    for (let i = 0; i < 12; i++) {
      await enqueueJob(app.kv, { type: "deliver_event", projectId: "slow", event: ping(i) }, {
        runAt: app.clock.now(),
        lane: "events",
      });
    }
    await enqueueJob(app.kv, { type: "watch_poll", projectId: "slow", watchId: "w" }, {
      runAt: app.clock.now(),
      lane: "watch",
    });
    worker.start();
    await until(() => ran.includes("poll") && ran.includes("deliver:slow"), 5_000, "slow jobs");

    // When: a confirmation check and another project's delivery become due.
    await enqueueJob(app.kv, txCheck("k"), { runAt: app.clock.now(), lane: "tx" });
    await enqueueJob(app.kv, { type: "deliver_event", projectId: "other", event: ping(99) }, {
      runAt: app.clock.now(),
      lane: "events",
    });
    app.ctx.jobWaker.wake();

    // Then: both run while the slow jobs still hang.
    await until(
      () => ran.includes("check") && ran.includes("deliver:other"),
      5_000,
      "the check and the other project's delivery",
    );
  } finally {
    release.resolve();
    await worker.stop();
  }
});

Deno.test("deliver_event retries a failed publish after exactly 0.5, 1 and 2 s", async () => {
  // The loop polls only once a minute here, so each retry runs on time only if the worker wakes
  // for it by itself.
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using h = await startEventsHarness({ kvPath: path, worker: { pollIntervalMs: 60_000 } });
  const clock = new RealClock();
  const instance = await h.instance({ owner: "real", clock });
  h.standIn.failNext("500", { count: 3 });
  await recordEvents(instance.ctx, h.project.id, [{ type: "ping", at: 1 }]);
  instance.worker.start();
  try {
    await h.standIn.waitForMessages(1, 10_000);
  } finally {
    await instance.worker.stop();
  }
  const times = h.standIn.attempts().map((a) => a.at);
  assert.equal(times.length, 4);
  const waits = times.slice(1).map((at, i) => at - (times[i] ?? NaN));
  for (const [i, nominal] of RETRY_DELAYS_MS.entries()) {
    const wait = waits[i] ?? NaN;
    // Never early; late only by the time one attempt takes on a loaded machine.
    assert.ok(wait >= nominal - 5, `wait ${i + 1} was ${wait} ms`);
    assert.ok(wait < nominal + 400, `wait ${i + 1} was ${wait} ms`);
  }
});

Deno.test("A job that runs longer than its lease keeps it: two sweeps never overlap", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  const clock = new RealClock();
  await using a = await createTestApp({ kvPath: path, clock });
  await using b = await createTestApp({ kvPath: path, clock });
  let running = 0;
  let most = 0;
  let runs = 0;
  const handlers: JobHandlers = {
    ...jobHandlers,
    tx_sweep: async () => {
      running++;
      runs++;
      most = Math.max(most, running);
      // Four times the lease.
      await new Promise((r) => setTimeout(r, 1_200));
      running--;
      return { kind: "done" };
    },
  };
  const options = { handlers, leaseMs: 300, pollIntervalMs: 50 };
  const workers = [
    new JobWorker(a.ctx, { ...options, owner: "a" }),
    new JobWorker(b.ctx, { ...options, owner: "b" }),
  ];
  await enqueueJob(a.kv, { type: "tx_sweep" }, { id: "tx_sweep", runAt: clock.now(), lane: "tx" });
  for (const worker of workers) worker.start();
  try {
    await until(() => runs > 0 && running === 0, 5_000, "the sweep to end");
    await new Promise((r) => setTimeout(r, 200));
  } finally {
    for (const worker of workers) await worker.stop();
  }
  assert.equal(most, 1);
  assert.equal(runs, 1);
  assert.equal((await getJobEntry(a.kv, "tx_sweep")).value?.status, "done");
});

Deno.test("A confirmation job's idempotency key follows the route's rule: 1 to 128 characters", () => {
  const payload = (key: string) => ({ type: "tx_confirm", projectId: "p", key, attemptId: "a" });
  assert.ok(txConfirmJobSchema.safeParse(payload("k".repeat(128))).success);
  assert.ok(txConfirmJobSchema.safeParse(payload("😀".repeat(128))).success);
  assert.ok(!txConfirmJobSchema.safeParse(payload("k".repeat(129))).success);
  assert.ok(!txConfirmJobSchema.safeParse(payload("")).success);
});

import assert from "node:assert/strict";
import { listDeliveries } from "../../kv/deliveries.ts";
import { listJobs } from "../../kv/jobs.ts";
import { getPublisherEntry } from "../../kv/event_publishers.ts";
import { listFeedEvents } from "../../kv/event_feed.ts";
import { getDeliveryUsage } from "../../kv/usage.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { jobHandlers } from "../../jobs/handlers.ts";
import { runPublishEvents } from "../../lib/events/publisher.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { restartLostPublishers } from "../../lib/events/publisher_loop.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import { sendTestPing } from "../../lib/events/publish.ts";
import { describePing } from "../../components/dashboard/ping_message.ts";
import type { RecordedEvent, ServiceEvent } from "../../core/events.ts";
import { packMessages } from "../../lib/events/pack.ts";
import { encodeEventMessage } from "../../lib/events/message.ts";
import type { InboxMessage } from "../../sandbox/roblox/mod.ts";
import { drain, PUBLISH_KEY, startEventsHarness, UNIVERSE } from "../support/events_harness.ts";
import * as dashboard from "../support/dashboard.ts";

const SIGNATURE =
  "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";

function payout(i: number): ServiceEvent {
  return {
    type: "tx",
    key: `round-7-player-${1_000_000_000 + i}`,
    kind: "transfer-sol",
    status: "confirmed",
    signature: SIGNATURE,
    userId: 1_000_000_000 + i,
    error: null,
  };
}

/** The feed ids each message carried, in the order the stand-in received them (none: a notice). */
function idsOf(message: InboxMessage): string[] {
  const data = message.data as { type: string; id?: string; events?: Array<{ id: string }> };
  if (data.type !== "events") return [data.id!];
  return data.events?.map((e) => e.id) ?? [];
}

/** The `through` of each burst notice received. */
function noticesOf(inbox: InboxMessage[]): string[] {
  return inbox.flatMap((m) => {
    const data = m.data as { type: string; through?: string };
    return data.type === "events" && data.through !== undefined ? [data.through] : [];
  });
}

/** Every event the feed holds, oldest first. */
async function feedIds(kv: Deno.Kv, projectId: string, now: number): Promise<string[]> {
  const page = await listFeedEvents(kv, projectId, {
    after: 0,
    limit: 5_000,
    types: null,
    now,
    maxDecoded: 5_000,
  });
  return page.events.map((e) => e.id);
}

/** Deliveries counted in usage (each event once, whether by message or notice). */
async function deliveredCount(kv: Deno.Kv, projectId: string, now: number): Promise<number> {
  const hours = await getDeliveryUsage(kv, projectId, now);
  return hours.reduce((sum, h) => sum + h.delivered, 0);
}

function allIds(inbox: InboxMessage[]): string[] {
  return inbox.flatMap(idsOf);
}

function sorted(ids: string[]): string[] {
  return ids.toSorted((x, y) => Number(x) - Number(y));
}

function range(from: number, to: number): string[] {
  return Array.from({ length: to - from + 1 }, (_, i) => String(from + i));
}

Deno.test("A packing project's round end of 500 tx events crosses the topic packed, each event once", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });

  // Given: 500 payouts settled in 500 separate commits, as a round end settles them.
  for (let i = 0; i < 500; i++) await recordEvents(h.a.ctx, h.project.id, [payout(i)]);
  assert.equal(h.standIn.inbox().length, 0, "recording only marks the feed");
  assert.deepEqual(
    (await listJobs(h.a.kv)).map((job) => job.payload.type),
    ["publish_events"],
    "one publisher loop, no job per event",
  );

  // When: the worker runs what is due, the clock standing still.
  await drain(h.a.worker);

  // Then
  const inbox = h.standIn.inbox();
  assert.deepEqual(sorted(allIds(inbox)), range(1, 500));
  for (const message of inbox) {
    const ids = idsOf(message).map(Number);
    assert.deepEqual(ids, ids.toSorted((x, y) => x - y), "feed order within a message");
  }
  assert.ok(inbox.every((m) => new TextEncoder().encode(m.message).length <= 1_000));
  assert.ok(inbox.length <= 125, `500 events in ${inbox.length} messages`);
  const first = inbox.find((m) => idsOf(m)[0] === "1")!.data as {
    v: number;
    type: string;
    events: unknown[];
  };
  assert.deepEqual([first.v, first.type], [1, "events"]);
  assert.deepEqual(first.events[0], {
    type: "tx",
    id: "1",
    key: "round-7-player-1000000000",
    kind: "transfer-sol",
    status: "confirmed",
    signature: SIGNATURE,
    userId: 1_000_000_000,
  });
  const log = await listDeliveries(h.a.kv, h.project.id);
  assert.equal(log.length, 100, "one entry per event, the newest 100 kept");
  assert.ok(log.every((d) => d.outcome === "delivered" && d.attempts === 1 && d.status === 200));
});

Deno.test("A round end that would not cross under the cap goes as one notice; the events stay in the feed", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true, messagesPerMinute: "80" });

  // Given: 500 payouts settled at once, about 125 packed messages where the cap allows 80 a minute.
  for (let i = 0; i < 500; i++) await recordEvents(h.a.ctx, h.project.id, [payout(i)]);

  // When
  await drain(h.a.worker);

  // Then: one notice instead of 125 messages, the cursor past every event.
  assert.deepEqual(h.standIn.inbox().map((m) => m.message), [
    '{"v":1,"type":"events","through":"500"}',
  ]);
  assert.deepEqual(await feedIds(h.a.kv, h.project.id, h.a.clock.now()), range(1, 500));
  const state = (await getPublisherEntry(h.a.kv, h.project.id)).value!;
  assert.deepEqual([state.cursor, state.pending], [500, []]);
  const log = await listDeliveries(h.a.kv, h.project.id);
  assert.equal(log.length, 100, "the newest 100 kept");
  assert.ok(log.every((d) => d.outcome === "notice" && d.status === 200));
  assert.deepEqual(sorted(log.map((d) => d.eventId)), range(401, 500));
  assert.equal(await deliveredCount(h.a.kv, h.project.id, h.a.clock.now()), 500);

  // And: a few later events cross as packed messages, after the notice's (at the next look).
  for (let i = 500; i < 503; i++) await recordEvents(h.a.ctx, h.project.id, [payout(i)]);
  h.a.clock.advance(1_000);
  await drain(h.a.worker);
  assert.deepEqual(allIds(h.standIn.inbox().slice(1)), range(501, 503));
});

Deno.test("A backlog the cap lets cross within seconds goes as packed messages, never a notice", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true, messagesPerMinute: "80" });
  for (let i = 0; i < 40; i++) await recordEvents(h.a.ctx, h.project.id, [payout(i)]);
  await drain(h.a.worker);
  assert.deepEqual(noticesOf(h.standIn.inbox()), []);
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), range(1, 40));
});

Deno.test("A notice that fails is retried as the spec retries an event; given up, its events count as dropped", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true, messagesPerMinute: "80" });
  await recordEvents(h.a.ctx, h.project.id, Array.from({ length: 500 }, (_, i) => payout(i)));
  h.standIn.failNext("500", { count: 4 });

  await drain(h.a.worker);
  for (const wait of [500, 1_000, 2_000]) {
    h.a.clock.advance(wait);
    await drain(h.a.worker);
  }

  assert.deepEqual(h.standIn.attempts().map((a) => a.status), [500, 500, 500, 500], "one message");
  assert.equal(h.standIn.inbox().length, 0);
  const log = await listDeliveries(h.a.kv, h.project.id);
  assert.equal(log.length, 100);
  assert.ok(log.every((d) => d.outcome === "gave_up" && d.attempts === 4 && d.status === 500));
  const hours = await getDeliveryUsage(h.a.kv, h.project.id, h.a.clock.now());
  assert.deepEqual(
    [hours.reduce((sum, x) => sum + x.delivered, 0), hours.reduce((sum, x) => sum + x.dropped, 0)],
    [0, 500],
  );
  assert.deepEqual(await feedIds(h.a.kv, h.project.id, h.a.clock.now()), range(1, 500));
});

Deno.test("Two instances publishing a capped round end never cover an event twice", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using h = await startEventsHarness({ kvPath: path });
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true, messagesPerMinute: "80" });
  const b = await h.instance({ owner: "b" });
  for (let i = 0; i < 500; i++) {
    await recordEvents(i % 2 ? b.ctx : h.a.ctx, h.project.id, [payout(i)]);
  }

  await drain(h.a.worker, b.worker);

  const inbox = h.standIn.inbox();
  assert.ok(inbox.length <= 5, `500 events in ${inbox.length} messages`);
  const through = noticesOf(inbox).map(Number);
  assert.equal(Math.max(...through, ...allIds(inbox).map(Number)), 500);
  assert.equal(new Set(through).size, through.length, "no notice twice");
  assert.equal(await deliveredCount(h.a.kv, h.project.id, h.a.clock.now()), 500, "each once");
  assert.equal((await getPublisherEntry(h.a.kv, h.project.id)).value!.cursor, 500);
});

Deno.test("A lone event of a packing project is its own message, exactly as the spec sends it", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
  await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 5 }]);
  await drain(h.a.worker);
  assert.deepEqual(h.standIn.inbox().map((m) => m.message), [
    '{"v":1,"type":"ping","id":"1","at":5}',
  ]);
});

Deno.test("The cap on messages a minute holds every 60 clock seconds to it; what waits goes out as it frees", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { messagesPerMinute: "5" });

  // Given: 12 events, unpacked, so one message each.
  for (let i = 0; i < 12; i++) await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: i }]);

  // When / Then: 5 go at once, the rest wait for the minute to free them.
  await drain(h.a.worker);
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), range(1, 5));
  h.a.clock.advance(59_999);
  await drain(h.a.worker);
  assert.equal(h.standIn.inbox().length, 5, "nothing more within the same 60 seconds");
  h.a.clock.advance(1);
  await drain(h.a.worker);
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), range(1, 10));
  assert.ok(
    h.standIn.inbox().every((m) => !("events" in (m.data as object))),
    "without packing each event is one message",
  );
  h.a.clock.advance(60_000);
  await drain(h.a.worker);
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), range(1, 12));
});

Deno.test("A test ping counts toward the cap on messages a minute, and is refused, not delayed, when it is full", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { messagesPerMinute: "3" });
  // Given: the publisher sent 2 of the minute's 3 messages.
  await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 1 }]);
  await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 2 }]);
  await drain(h.a.worker);

  // When: a test ping is sent, then an event is recorded.
  assert.deepEqual(await sendTestPing(h.a.ctx, h.project.id), { ok: true });
  await recordEvents(h.a.ctx, h.project.id, [payout(4)]);
  h.a.clock.advance(1_000);
  await drain(h.a.worker);

  // Then: the ping took the last message of the minute; the event waits for the next.
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), range(1, 3));
  // And: another ping is refused with the reason, nothing sent or recorded.
  const refused = await sendTestPing(h.a.ctx, h.project.id);
  assert.equal(refused.ok, false);
  assert.match(
    describePing(refused),
    /^The cap of 3 messages a minute is full \(a test event counts toward it\): nothing was sent; room frees in 59 s\.$/,
  );
  assert.equal(h.standIn.attempts().length, 3);
  h.a.clock.advance(59_000);
  await drain(h.a.worker);
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), range(1, 4));
});

Deno.test("The dashboard says why a test ping was refused by the cap", async () => {
  await using h = await startEventsHarness();
  const dev = await dashboard.signInDeveloper(h.a.app);
  const project = await dashboard.createProjectAs(h.a.app, dev);
  const base = `/dashboard/projects/${project.id}`;
  await dashboard.postJson(h.a.app, `${base}/settings`, {
    universeId: UNIVERSE,
    publishingKey: PUBLISH_KEY,
    messagesPerMinute: "1",
  }, { jar: dev.jar });
  // Given: a test ping took the minute's one message.
  const first = await dashboard.postJson(h.a.app, `${base}/ping`, undefined, { jar: dev.jar });
  assert.deepEqual(await first.json(), { ok: true });

  // When: another is sent from the settings page.
  const res = await dashboard.postForm(h.a.app, `${base}/ping`, {}, { jar: dev.jar });

  // Then
  assert.equal(res.headers.get("location"), `${base}/settings#events`);
  const page = await (await dashboard.getPage(h.a.app, `${base}/settings`, dev.jar)).text();
  assert.ok(
    page.includes(
      "The cap of 1 message a minute is full (a test event counts toward it): nothing was sent; room frees in 60 s.",
    ),
  );
  assert.equal(h.standIn.attempts().length, 1);
});

Deno.test("A test ping never counts itself into a running round of the publisher", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { messagesPerMinute: "5" });
  await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 1 }]);
  // Given: a round that sent the event and has not committed yet (held until released).
  const sent = Promise.withResolvers<void>();
  const release = Promise.withResolvers<void>();
  const held = new JobWorker(h.a.ctx, {
    owner: "held",
    handlers: {
      ...jobHandlers,
      publish_events: async (run) => {
        const outcome = await runPublishEvents(run);
        sent.resolve();
        await release.promise;
        return outcome;
      },
    },
  });
  const round = held.runDue();
  await sent.promise;

  // When: a test ping is sent while the round holds on past the ping's wait.
  const ping = await sendTestPing(h.a.ctx, h.project.id);
  release.resolve();
  await round;

  // Then: the ping was refused rather than undo the round, whose commit stood: the event went once.
  assert.equal(ping.ok, false);
  assert.match(describePing(ping), /busy sending/);
  h.a.clock.advance(1_000);
  await drain(h.a.worker);
  assert.deepEqual(allIds(h.standIn.inbox()), ["1"]);
  const publisher = (await getPublisherEntry(h.a.kv, h.project.id)).value;
  assert.deepEqual(publisher?.sent.map(([, count]) => count), [1], "the round's one message");
});

Deno.test("A packed message is retried as the spec retries an event, then dropped with each of its events logged", async (t) => {
  for (
    const [failure, attempts, outcome] of [["500", 4, "gave_up"], ["401", 1, "rejected"]] as const
  ) {
    await t.step(`${failure} -> ${attempts} attempts, ${outcome}`, async () => {
      await using h = await startEventsHarness();
      await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
      await recordEvents(h.a.ctx, h.project.id, [payout(1), payout(2), payout(3)]);
      h.standIn.failNext(failure, { count: attempts });

      await drain(h.a.worker);
      for (const wait of [500, 1_000, 2_000].slice(0, attempts - 1)) {
        h.a.clock.advance(wait - 1);
        await drain(h.a.worker);
        assert.equal(h.standIn.attempts().length, 1 + [500, 1_000, 2_000].indexOf(wait));
        h.a.clock.advance(1);
        await drain(h.a.worker);
      }
      assert.equal(h.standIn.attempts().length, attempts);

      // The next events are not held behind the dropped message.
      await recordEvents(h.a.ctx, h.project.id, [payout(4)]);
      h.a.clock.advance(60_000);
      await drain(h.a.worker);
      assert.deepEqual(allIds(h.standIn.inbox()), ["4"]);
      const log = await listDeliveries(h.a.kv, h.project.id);
      const dropped = log.filter((d) => d.outcome === outcome);
      assert.deepEqual(dropped.map((d) => d.eventId).sort(), ["1", "2", "3"]);
      assert.ok(dropped.every((d) => d.attempts === attempts && d.status === Number(failure)));
    });
  }

  await t.step("a message retried after a 429 is delivered when the topic recovers", async () => {
    await using h = await startEventsHarness();
    await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
    await recordEvents(h.a.ctx, h.project.id, [payout(1), payout(2)]);
    h.standIn.failNext("429");
    await drain(h.a.worker);
    h.a.clock.advance(500);
    await drain(h.a.worker);
    assert.deepEqual(allIds(h.standIn.inbox()), ["1", "2"]);
    const log = await listDeliveries(h.a.kv, h.project.id);
    assert.deepEqual(log.map((d) => [d.outcome, d.attempts]), [["delivered", 2], ["delivered", 2]]);
  });
});

Deno.test("Two instances publishing one packing project never send an event twice", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using h = await startEventsHarness({ kvPath: path });
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
  const b = await h.instance({ owner: "b" });

  // Given: both instances record payouts, interleaved.
  for (let i = 0; i < 150; i++) {
    await recordEvents(i % 2 ? b.ctx : h.a.ctx, h.project.id, [payout(i)]);
  }

  // When: both workers run at once until nothing is due.
  await drain(h.a.worker, b.worker);

  // Then
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), range(1, 150));
});

Deno.test("Turning packing on hands over exactly: events queued before go one job each, later ones packed", async () => {
  await using h = await startEventsHarness();
  for (let i = 0; i < 3; i++) await recordEvents(h.a.ctx, h.project.id, [payout(i)]);
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
  await recordEvents(h.a.ctx, h.project.id, [payout(3), payout(4), payout(5)]);

  await drain(h.a.worker);

  const inbox = h.standIn.inbox();
  assert.deepEqual(sorted(allIds(inbox)), range(1, 6));
  assert.equal(inbox.filter((m) => (m.data as { type: string }).type === "events").length, 1);
});

Deno.test("A publisher whose project stops packing sends what it marked, then ends its loop", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
  await recordEvents(h.a.ctx, h.project.id, [payout(1), payout(2)]);
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: false });
  await recordEvents(h.a.ctx, h.project.id, [payout(3)]);

  await drain(h.a.worker);
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), range(1, 3), "each once, by one path");
  h.a.clock.advance(30_000);
  await drain(h.a.worker);
  assert.deepEqual(await listJobs(h.a.kv), [], "the loop ended");
});

Deno.test("restartLostPublishers() starts the loop of a packing project that has none, once", async () => {
  await using h = await startEventsHarness();
  // Given: a publisher that ended while the project stopped packing, and packing turned on again.
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
  await recordEvents(h.a.ctx, h.project.id, [payout(1)]);
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: false });
  await drain(h.a.worker);
  h.a.clock.advance(30_000);
  await drain(h.a.worker);
  assert.deepEqual(await listJobs(h.a.kv), []);
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });

  // When / Then
  assert.equal(await restartLostPublishers(h.a.ctx), 1);
  assert.equal(await restartLostPublishers(h.a.ctx), 0, "a running loop is left alone");
  assert.deepEqual((await listJobs(h.a.kv)).map((job) => job.payload.type), ["publish_events"]);
});

Deno.test("An instance that dies before starting the first publisher loop leaves the sweep to start it", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
  // Given: the instance recording the project's first marked events dies before it starts the
  // loop (its cache says the loop runs, so it never looks).
  await h.a.ctx.events.publishers.get(h.project.id, () => Promise.resolve(true as const));
  await recordEvents(h.a.ctx, h.project.id, [payout(1), payout(2)]);
  assert.deepEqual(await listJobs(h.a.kv), [], "no loop was started");

  // When: the minute sweep runs, then the worker.
  assert.equal(await restartLostPublishers(h.a.ctx), 1);
  await drain(h.a.worker);

  // Then
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), ["1", "2"]);
});

Deno.test("A publisher idle for long looks every 5 s, and a commit marking events brings its round forward", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { packEvents: true });
  await recordEvents(h.a.ctx, h.project.id, [payout(1)]);
  await drain(h.a.worker);

  // Given: 40 s without events, the clock moving a second at a time.
  let rounds = 0;
  for (let s = 0; s < 40; s++) {
    h.a.clock.advance(1_000);
    rounds += await drain(h.a.worker);
  }
  assert.ok(rounds >= 30 && rounds <= 36, `a round a second, then one each 5 s (${rounds})`);

  // When: an event is recorded, the clock standing still.
  await recordEvents(h.a.ctx, h.project.id, [payout(2)]);
  await drain(h.a.worker);

  // Then
  assert.deepEqual(sorted(allIds(h.standIn.inbox())), ["1", "2"]);
});

Deno.test("packMessages() keeps every message within 1,000 bytes and every entry the event's own message", () => {
  // Given: every type, tx errors cut by the spec's rule, an id of 16 digits.
  const events: RecordedEvent[] = [];
  for (let i = 0; i < 120; i++) {
    const id = String(9_007_199_254_740_000 + i);
    const error = i % 3 === 0
      ? `{"InstructionError":[0,{"Custom":${i}}]} ${"x".repeat(900)}`
      : null;
    const variants: ServiceEvent[] = [
      { ...payout(i), status: error ? "failed" : "confirmed", error } as ServiceEvent,
      { type: "wallet_linked", userId: i, address: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin" },
      { type: "ping", at: i },
    ];
    events.push({ ...variants[i % 3]!, id, createdAt: 0 });
  }

  // When
  const messages = packMessages(events, { pack: true });

  // Then
  for (const { message, events: carried } of messages) {
    assert.ok(new TextEncoder().encode(message).length <= 1_000, message);
    const data = JSON.parse(message);
    const entries = data.type === "events" ? data.events : [data];
    assert.deepEqual(
      entries,
      carried.map((event) => {
        const { v: _, ...entry } = JSON.parse(encodeEventMessage(event));
        return data.type === "events" ? entry : { v: 1, ...entry };
      }),
    );
  }
  assert.deepEqual(messages.flatMap((m) => m.events.map((e) => e.id)), events.map((e) => e.id));
  assert.ok(messages.length < events.length / 2, `${messages.length} messages`);
});

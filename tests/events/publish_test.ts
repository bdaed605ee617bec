import assert from "node:assert/strict";
import { listDeliveries } from "../../kv/deliveries.ts";
import { listJobs } from "../../kv/jobs.ts";
import { encodeEventMessage } from "../../lib/events/message.ts";
import { sendTestPing } from "../../lib/events/publish.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import type { ServiceEvent } from "../../core/events.ts";
import type { PublishFailure } from "../../sandbox/roblox/mod.ts";
import { drain, PUBLISH_KEY, startEventsHarness, UNIVERSE } from "../support/events_harness.ts";

const ADDRESS = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const SIGNATURE =
  "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";

Deno.test("encodeEventMessage() writes v: 1, the type and the fields, leaving nulls out", async (t) => {
  const cases: [ServiceEvent, string][] = [
    [
      { type: "wallet_linked", userId: 12, address: ADDRESS },
      `{"v":1,"type":"wallet_linked","userId":12,"address":"${ADDRESS}"}`,
    ],
    [
      { type: "wallet_unlinked", userId: 12, address: ADDRESS },
      `{"v":1,"type":"wallet_unlinked","userId":12,"address":"${ADDRESS}"}`,
    ],
    [
      {
        type: "tx",
        key: "k1",
        kind: "transfer-sol",
        status: "confirmed",
        signature: SIGNATURE,
        userId: 12,
        error: null,
      },
      `{"v":1,"type":"tx","key":"k1","kind":"transfer-sol","status":"confirmed","signature":"${SIGNATURE}","userId":12}`,
    ],
    [
      {
        type: "tx",
        key: "k2",
        kind: "mint-token",
        status: "failed",
        signature: null,
        userId: null,
        error: "Could not build the transaction: timeout",
      },
      `{"v":1,"type":"tx","key":"k2","kind":"mint-token","status":"failed","error":"Could not build the transaction: timeout"}`,
    ],
    [
      {
        type: "watch",
        name: "vault",
        address: ADDRESS,
        signature: SIGNATURE,
        slot: 99,
        failed: true,
      },
      `{"v":1,"type":"watch","name":"vault","address":"${ADDRESS}","signature":"${SIGNATURE}","slot":99,"failed":true}`,
    ],
    [{ type: "ping", at: 1_700_000_000_000 }, `{"v":1,"type":"ping","at":1700000000000}`],
  ];
  for (const [event, expected] of cases) {
    await t.step(`${event.type}${event.type === "tx" ? ` (${event.status})` : ""}`, () => {
      assert.equal(encodeEventMessage(event), expected);
    });
  }
});

Deno.test("encodeEventMessage() keeps messages within 1,000 bytes by cutting only a tx error", async (t) => {
  const tx: Extract<ServiceEvent, { type: "tx" }> = {
    type: "tx",
    key: "order-1",
    kind: "transfer-token",
    status: "failed",
    signature: SIGNATURE,
    userId: 5,
    error: null,
  };

  await t.step("a long error is cut to its first 300 characters", () => {
    const error = `{"InstructionError":[0,{"Custom":1}]} ${"x".repeat(2_000)}`;
    const message = encodeEventMessage({ ...tx, error });
    assert.equal(JSON.parse(message).error, error.slice(0, 300));
    assert.ok(new TextEncoder().encode(message).length <= 1_000);
  });

  await t.step("characters, not bytes or UTF-16 units, are counted", () => {
    const error = "é😀".repeat(400);
    const decoded = JSON.parse(encodeEventMessage({ ...tx, error })).error as string;
    assert.equal(Array.from(decoded).length, 300);
    assert.equal(decoded, "é😀".repeat(150));
  });

  await t.step("an error that fits is kept whole", () => {
    const error = "e".repeat(700);
    assert.equal(JSON.parse(encodeEventMessage({ ...tx, error })).error, error);
  });

  await t.step("an id of 16 digits still fits a maximal tx event", () => {
    // Every field at its largest: a 128-character key of two-byte characters, an 88-character
    // signature, the largest user id and an error cut to 300 characters (errors come from the
    // chain and the service: ASCII).
    const message = encodeEventMessage({
      ...tx,
      id: String(Number.MAX_SAFE_INTEGER),
      key: "é".repeat(128),
      signature: "5".repeat(88),
      userId: Number.MAX_SAFE_INTEGER,
      error: `{"InstructionError":[0,{"Custom":1}]} ${"x".repeat(2_000)}`,
    });
    assert.equal(JSON.parse(message).id, "9007199254740991");
    assert.equal(Array.from(JSON.parse(message).error).length, 300);
    assert.ok(new TextEncoder().encode(message).length <= 1_000);
  });

  await t.step("no other field is shortened", () => {
    const key = "k".repeat(1_000);
    const message = encodeEventMessage({ ...tx, key, error: "short" });
    assert.deepEqual([JSON.parse(message).key, JSON.parse(message).error], [key, "short"]);
  });
});

Deno.test("recordEvents() delivers each event type through Open Cloud with the key and topic", async () => {
  await using h = await startEventsHarness();
  await saveEventSettings(h.a.ctx, h.project.id, { topic: "blocklink_events" });
  const events: ServiceEvent[] = [
    { type: "wallet_linked", userId: 1, address: ADDRESS },
    { type: "wallet_unlinked", userId: 2, address: ADDRESS },
    {
      type: "tx",
      key: "k",
      kind: "transfer-sol",
      status: "failed",
      signature: null,
      userId: null,
      error: "Transaction expired before it was confirmed",
    },
    { type: "watch", name: "w", address: ADDRESS, signature: SIGNATURE, slot: 3, failed: false },
    { type: "ping", at: 5 },
  ];

  // When
  for (const event of events) await recordEvents(h.a.ctx, h.project.id, [event]);
  assert.equal(h.standIn.inbox().length, 0, "publishing only queues");
  await drain(h.a.worker);

  // Then
  const inbox = h.standIn.inbox();
  assert.deepEqual(
    inbox.map((m) => [m.universeId, m.topic]),
    events.map(() => [UNIVERSE, "blocklink_events"]),
  );
  const byType = new Map(inbox.map((m) => [(m.data as { type: string }).type, m.data]));
  assert.deepEqual(byType.get("tx"), {
    v: 1,
    type: "tx",
    id: "3",
    key: "k",
    kind: "transfer-sol",
    status: "failed",
    error: "Transaction expired before it was confirmed",
  });
  assert.deepEqual(byType.get("wallet_unlinked"), {
    v: 1,
    type: "wallet_unlinked",
    id: "2",
    userId: 2,
    address: ADDRESS,
  });
  assert.deepEqual(byType.get("watch"), {
    v: 1,
    type: "watch",
    id: "4",
    name: "w",
    address: ADDRESS,
    signature: SIGNATURE,
    slot: 3,
    failed: false,
  });
  const log = await listDeliveries(h.a.kv, h.project.id);
  assert.equal(log.length, 5);
  assert.ok(log.every((d) => d.outcome === "delivered" && d.attempts === 1 && d.status === 200));
  assert.deepEqual(log.map((d) => d.eventId).sort(), ["1", "2", "3", "4", "5"]);
});

Deno.test("Delivery retries network errors, 429 and 5xx up to 4 attempts, waiting 0.5, 1 and 2 s", async (t) => {
  const cases: [PublishFailure, number, string][] = [
    ["500", 4, "gave_up"],
    ["429", 4, "gave_up"],
    ["hang", 4, "gave_up"],
    ["401", 1, "rejected"],
  ];
  for (const [failure, attempts, outcome] of cases) {
    await t.step(`${failure === "hang" ? "timeout" : failure} -> ${attempts}`, async () => {
      await using h = await startEventsHarness();
      h.standIn.failNext(failure, { count: 10 });
      await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 1 }]);

      assert.equal(await h.a.worker.runDue(), 1);
      for (const wait of [500, 1_000, 2_000].slice(0, attempts - 1)) {
        h.a.clock.advance(wait - 1);
        assert.equal(await h.a.worker.runDue(), 0, `nothing runs before ${wait} ms`);
        h.a.clock.advance(1);
        assert.equal(await h.a.worker.runDue(), 1, `the next attempt runs after ${wait} ms`);
      }
      h.a.clock.advance(60_000);
      assert.equal(await h.a.worker.runDue(), 0, "no attempt after the last");

      assert.equal(h.standIn.attempts().length, attempts);
      assert.deepEqual(await listJobs(h.a.kv), [], "the event is dropped");
      const [delivery] = await listDeliveries(h.a.kv, h.project.id);
      assert.ok(delivery);
      assert.deepEqual(
        [delivery.outcome, delivery.attempts, delivery.status],
        [outcome, attempts, failure === "hang" ? null : Number(failure)],
      );
    });
  }

  await t.step("a retried event is delivered when the service recovers", async () => {
    await using h = await startEventsHarness();
    h.standIn.failNext("500", { count: 2 });
    await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 1 }]);
    await drain(h.a.worker);
    h.a.clock.advance(500);
    await drain(h.a.worker);
    h.a.clock.advance(1_000);
    await drain(h.a.worker);
    assert.equal(h.standIn.inbox().length, 1);
    const [delivery] = await listDeliveries(h.a.kv, h.project.id);
    assert.ok(delivery);
    assert.deepEqual([delivery.outcome, delivery.attempts], ["delivered", 3]);
  });
});

Deno.test("Without both settings nothing is published", async (t) => {
  await t.step("recordEvents() queues nothing while events are off", async () => {
    await using h = await startEventsHarness({ eventsOn: false });
    await saveEventSettings(h.a.ctx, h.project.id, { universeId: UNIVERSE });
    await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 1 }]);
    assert.deepEqual(await listJobs(h.a.kv), []);
    await drain(h.a.worker);
    assert.deepEqual(h.standIn.attempts(), []);
  });

  await t.step("an event queued before events were turned off is skipped", async () => {
    await using h = await startEventsHarness();
    await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 1 }]);
    await saveEventSettings(h.a.ctx, h.project.id, { universeId: "" });
    await drain(h.a.worker);
    assert.deepEqual(h.standIn.attempts(), []);
    const [delivery] = await listDeliveries(h.a.kv, h.project.id);
    assert.ok(delivery);
    assert.equal(delivery.outcome, "skipped");
  });
});

Deno.test("Settings changes reach other instances within 10 seconds", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using h = await startEventsHarness({ kvPath: path });
  const b = await h.instance({ owner: "b" });
  h.standIn.registerKey("second-key", "777");

  // Given: instance B has read the settings.
  await recordEvents(b.ctx, h.project.id, [{ type: "ping", at: 1 }]);
  await drain(b.worker);

  // When: the dashboard (on instance A) changes universe, key and topic.
  await saveEventSettings(h.a.ctx, h.project.id, {
    universeId: "777",
    publishingKey: "second-key",
    topic: "t2",
  });
  await recordEvents(b.ctx, h.project.id, [{ type: "ping", at: 2 }]);
  await drain(b.worker);
  h.a.clock.advance(10_000);
  await recordEvents(b.ctx, h.project.id, [{ type: "ping", at: 3 }]);
  await drain(b.worker);

  // Then: B used its cached settings for at most 10 s, then the new ones.
  assert.deepEqual(
    h.standIn.inbox().map((m) => [(m.data as { at: number }).at, m.universeId, m.topic]),
    [[1, UNIVERSE, "svc"], [2, UNIVERSE, "svc"], [3, "777", "t2"]],
  );
});

Deno.test("sendTestPing() answers with what the messaging service said", async (t) => {
  await t.step("accepted", async () => {
    await using h = await startEventsHarness();
    assert.deepEqual(await sendTestPing(h.a.ctx, h.project.id), { ok: true });
    assert.deepEqual(h.standIn.inbox().map((m) => m.data), [
      { v: 1, type: "ping", id: "1", at: h.a.clock.now() },
    ]);
    const [delivery] = await listDeliveries(h.a.kv, h.project.id);
    assert.ok(delivery);
    assert.deepEqual([delivery.type, delivery.outcome, delivery.status], [
      "ping",
      "delivered",
      200,
    ]);
  });

  for (const [failure, status] of [["401", 401], ["500", 500], ["hang", null]] as const) {
    await t.step(`${failure}`, async () => {
      await using h = await startEventsHarness();
      h.standIn.failNext(failure);
      const result = await sendTestPing(h.a.ctx, h.project.id);
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.status, status);
      assert.equal(h.standIn.attempts().length, 1);
    });
  }

  await t.step("a key for another universe answers 403", async () => {
    await using h = await startEventsHarness();
    await saveEventSettings(h.a.ctx, h.project.id, { universeId: "999" });
    const result = await sendTestPing(h.a.ctx, h.project.id);
    assert.deepEqual(result.ok === false && result.status, 403);
  });

  await t.step("events off", async () => {
    await using h = await startEventsHarness({ eventsOn: false });
    const result = await sendTestPing(h.a.ctx, h.project.id);
    assert.equal(result.ok === false && result.status, null);
    assert.deepEqual(h.standIn.attempts(), []);
  });
});

Deno.test("The publishing key is never sent on to where a redirect points", async (t) => {
  // Given: PUBLISH_URL answers every publish with a redirect to a host that accepts the key.
  const forwarded: string[] = [];
  let redirectStatus = 307;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    if (url.pathname.startsWith("/elsewhere/")) {
      forwarded.push(req.headers.get("x-api-key") ?? "");
      return new Response(null, { status: 200 });
    }
    return Response.redirect(`${url.origin}/elsewhere${url.pathname}`, redirectStatus);
  });
  await using _server = { [Symbol.asyncDispose]: () => server.shutdown() };
  const publishUrl = `http://127.0.0.1:${server.addr.port}`;

  for (const status of [301, 302, 307, 308]) {
    await t.step(`a ${status} answer is the answer`, async () => {
      redirectStatus = status;
      await using h = await startEventsHarness({ config: { publishUrl } });
      // When: a test event is published (the same client delivers every event).
      const result = await sendTestPing(h.a.ctx, h.project.id);

      // Then: the redirect is not followed, and is reported as the platform's answer.
      assert.deepEqual(forwarded, []);
      assert.deepEqual(result.ok === false && result.status, status);
    });
  }
});

Deno.test("The delivery log keeps the last 100 deliveries, newest first", async () => {
  await using h = await startEventsHarness();
  for (let i = 0; i < 130; i++) {
    await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: i }]);
  }
  await drain(h.a.worker);
  h.a.clock.advance(1);
  await sendTestPing(h.a.ctx, h.project.id);

  const log = await listDeliveries(h.a.kv, h.project.id);
  assert.equal(log.length, 100);
  const [newest] = log;
  assert.ok(newest);
  assert.deepEqual([newest.attempts, newest.at], [1, h.a.clock.now()], "the test ping is newest");
  const stored = [];
  for await (const e of h.a.kv.list({ prefix: ["deliveries", h.project.id] })) stored.push(e);
  assert.equal(stored.length, 100, "older entries are deleted, not only hidden");
  assert.ok(
    PUBLISH_KEY && !JSON.stringify(stored).includes(PUBLISH_KEY),
    "the key is never logged",
  );
});

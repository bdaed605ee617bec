// The event feed over HTTP on a real KV: ids shared with published messages, cursor semantics,
// type filters, limits, retention, events off, and an event whose publish was lost.
import assert from "node:assert/strict";
import { listDeliveries } from "../../kv/deliveries.ts";
import { sendTestPing } from "../../lib/events/publish.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import type { ServiceEvent } from "../../core/events.ts";
import { linkPlayerWallet, unlinkPlayerWallet } from "../../lib/link/linking.ts";
import { drain, type EventsHarness, startEventsHarness } from "../support/events_harness.ts";
import { call } from "../support/test_app.ts";

const ADDRESS = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const OTHER = "4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T";
const SIGNATURE =
  "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW";

const txEvent = (key: string): ServiceEvent => ({
  type: "tx",
  key,
  kind: "transfer-sol",
  status: "confirmed",
  signature: SIGNATURE,
  userId: 7,
  error: null,
});

type FeedEvent = Record<string, unknown>;

async function feed(h: EventsHarness, query = ""): Promise<{ events: FeedEvent[]; next: string }> {
  const response = await call(h.a.app, `/v1/events${query}`, { apiKey: h.apiKey });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

async function refused(h: EventsHarness, query: string, message?: RegExp) {
  const response = await call(h.a.app, `/v1/events${query}`, { apiKey: h.apiKey });
  const body = await response.json();
  assert.equal(response.status, 400, query);
  assert.equal(body.error.code, "invalid_request", query);
  if (message) assert.match(body.error.message, message);
}

Deno.test("GET /v1/events answers each event once, oldest first, with the id its message carried", async () => {
  // Given events of every kind, published through the messaging stand-in.
  await using h = await startEventsHarness();
  await linkPlayerWallet(h.a.ctx, h.project.id, { userId: 1, address: ADDRESS });
  await linkPlayerWallet(h.a.ctx, h.project.id, { userId: 2, address: ADDRESS });
  await unlinkPlayerWallet(h.a.ctx, h.project.id, 2);
  await recordEvents(h.a.ctx, h.project.id, [txEvent("order-1")]);
  await recordEvents(h.a.ctx, h.project.id, [{
    type: "watch",
    name: "vault",
    address: OTHER,
    signature: SIGNATURE,
    slot: 12,
    failed: false,
  }]);
  assert.deepEqual(await sendTestPing(h.a.ctx, h.project.id), { ok: true });
  await drain(h.a.worker);

  // When
  const { events, next } = await feed(h);

  // Then the feed lists them in order with `{ id, type, createdAt, ...payload }`.
  const now = h.a.clock.now();
  assert.deepEqual(events, [
    { id: "1", type: "wallet_linked", createdAt: now, userId: 1, address: ADDRESS },
    { id: "2", type: "wallet_unlinked", createdAt: now, userId: 1, address: ADDRESS },
    { id: "3", type: "wallet_linked", createdAt: now, userId: 2, address: ADDRESS },
    { id: "4", type: "wallet_unlinked", createdAt: now, userId: 2, address: ADDRESS },
    { id: "5", createdAt: now, ...txEvent("order-1") },
    {
      id: "6",
      type: "watch",
      createdAt: now,
      name: "vault",
      address: OTHER,
      signature: SIGNATURE,
      slot: 12,
      failed: false,
    },
    { id: "7", type: "ping", createdAt: now, at: now },
  ]);
  assert.deepEqual(Object.keys(events[0] ?? {}).slice(0, 3), ["id", "type", "createdAt"]);
  assert.equal(next, "7");
  // And every published message carries the id of its feed event, with the same payload.
  const messages = h.standIn.inbox().map((m) => m.data as Record<string, unknown>);
  assert.equal(messages.length, 7);
  for (const message of messages) {
    const { v, ...fields } = message;
    const event: FeedEvent = events.find((e) => e.id === message.id)!;
    assert.equal(v, 1);
    const { createdAt: _, ...withoutTime } = event;
    const present: FeedEvent = Object.fromEntries(
      Object.entries(withoutTime).filter(([, x]) => x !== null),
    );
    assert.deepEqual(fields, present);
  }
  // And the delivery log names the same ids.
  const logged = (await listDeliveries(h.a.kv, h.project.id)).map((d) => d.eventId).sort();
  assert.deepEqual(logged, ["1", "2", "3", "4", "5", "6", "7"]);
});

Deno.test("GET /v1/events pages with after and limit, and answers the same cursor when nothing is new", async (t) => {
  await using h = await startEventsHarness({ eventsOn: false });
  const keys = Array.from({ length: 250 }, (_, i) => `k${i + 1}`);
  for (const key of keys) await recordEvents(h.a.ctx, h.project.id, [txEvent(key)]);

  await t.step("without limit, 100 from the oldest", async () => {
    const page = await feed(h);
    assert.deepEqual(page.events.map((e) => e.key), keys.slice(0, 100));
    assert.equal(page.next, "100");
  });

  await t.step("following next reads the rest once, in order", async () => {
    const seen: unknown[] = [];
    let after = "0";
    for (const limit of [1, 7, 500]) {
      const page = await feed(h, `?after=${after}&limit=${limit}`);
      assert.equal(page.events.length, Math.min(limit, 250 - seen.length));
      seen.push(...page.events.map((e) => e.key));
      after = page.next;
    }
    assert.deepEqual(seen, keys);
    assert.equal(after, "250");
  });

  await t.step("at the end: no events and the same cursor, until a new one comes", async () => {
    assert.deepEqual(await feed(h, "?after=250"), { events: [], next: "250" });
    await recordEvents(h.a.ctx, h.project.id, [txEvent("late")]);
    const page = await feed(h, "?after=250");
    assert.deepEqual([page.events.map((e) => e.key), page.next], [["late"], "251"]);
  });

  await t.step("an event id is a cursor too: after=<id> resumes behind that event", async () => {
    const page = await feed(h, "?after=248&limit=2");
    assert.deepEqual(page.events.map((e) => e.id), ["249", "250"]);
  });

  await t.step("limit outside 1..500 and malformed cursors answer invalid_request", async () => {
    for (const limit of ["0", "501", "-1", "1.5", "x", ""]) {
      await refused(h, `?limit=${limit}`, /^limit: /);
    }
    for (const after of ["-1", "01", "abc", "1e3", "12345678901234567"]) {
      await refused(h, `?after=${after}`, /^after: /);
    }
  });

  await t.step(
    "a cursor past the end of the feed is refused rather than skipping events",
    async () => {
      await refused(h, "?after=252", /^after: is past the end of this project's feed$/);
    },
  );

  await t.step("another project's feed is its own", async () => {
    const other = await startEventsHarness({ eventsOn: false });
    try {
      const response = await call(other.a.app, "/v1/events", { apiKey: other.apiKey });
      assert.deepEqual(await response.json(), { events: [], next: "0" });
    } finally {
      await other.close();
    }
  });

  await t.step("the feed is a /v1 route: an API key is required", async () => {
    const response = await call(h.a.app, "/v1/events");
    assert.equal(response.status, 401);
    assert.equal((await response.json()).error.code, "unauthorized");
  });
});

Deno.test("GET /v1/events?types= keeps only the listed types while next moves past the others", async (t) => {
  await using h = await startEventsHarness({ eventsOn: false });
  await linkPlayerWallet(h.a.ctx, h.project.id, { userId: 1, address: ADDRESS }); // 1
  await recordEvents(h.a.ctx, h.project.id, [txEvent("a")]); // 2
  await recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at: 1 }]); // 3
  await unlinkPlayerWallet(h.a.ctx, h.project.id, 1); // 4
  await recordEvents(h.a.ctx, h.project.id, [txEvent("b")]); // 5

  await t.step("one type", async () => {
    const page = await feed(h, "?types=tx");
    assert.deepEqual([page.events.map((e) => e.id), page.next], [["2", "5"], "5"]);
  });

  await t.step("a list, with a limit", async () => {
    const page = await feed(h, "?types=wallet_linked,wallet_unlinked,ping&limit=2");
    assert.deepEqual([page.events.map((e) => e.id), page.next], [["1", "3"], "3"]);
    const rest = await feed(h, `?types=wallet_linked,wallet_unlinked,ping&after=${page.next}`);
    assert.deepEqual([rest.events.map((e) => e.id), rest.next], [["4"], "5"]);
  });

  await t.step("repeated types=: every type asked, as with commas (issue 27)", async () => {
    const repeated = await feed(h, "?types=tx&types=ping");
    assert.deepEqual([repeated.events.map((e) => e.id), repeated.next], [["2", "3", "5"], "5"]);
    const mixed = await feed(h, "?types=wallet_linked,tx&types=ping");
    assert.deepEqual(mixed.events.map((e) => e.id), ["1", "2", "3", "5"]);
  });

  await t.step("another parameter given twice is refused, never half read", async () => {
    await refused(h, "?limit=1&limit=2", /^limit: must be given once$/);
    await refused(h, "?after=1&after=2", /^after: must be given once$/);
  });

  await t.step(
    "nothing of the type: next still moves, so the same events are not examined again",
    async () => {
      assert.deepEqual(await feed(h, "?types=watch"), { events: [], next: "5" });
    },
  );

  await t.step("an unknown type or a malformed list answers invalid_request", async () => {
    for (const types of ["", "transfer", "tx,", ",tx", "tx,,ping", "TX", "tx&types=nope"]) {
      await refused(h, `?types=${types}`, /^types\.\d+: Invalid option: expected one of/);
    }
  });
});

Deno.test("GET /v1/events?types= examines at most 1,000 events per answer", async () => {
  await using h = await startEventsHarness({ eventsOn: false });
  const pings: ServiceEvent[] = Array.from({ length: 1_500 }, (_, i) => ({ type: "ping", at: i }));
  for (let i = 0; i < pings.length; i += 50) {
    await recordEvents(h.a.ctx, h.project.id, pings.slice(i, i + 50));
  }
  await recordEvents(h.a.ctx, h.project.id, [txEvent("after-the-pings")]);

  const first = await feed(h, "?types=tx");
  assert.deepEqual(first, { events: [], next: "1000" });
  const second = await feed(h, `?types=tx&after=${first.next}`);
  assert.deepEqual([second.events.map((e) => e.key), second.next], [["after-the-pings"], "1501"]);
});

Deno.test("Events are kept 7 days in the feed", async () => {
  await using h = await startEventsHarness({ eventsOn: false });
  await recordEvents(h.a.ctx, h.project.id, [txEvent("old")]);
  h.a.clock.advance(24 * 60 * 60 * 1000);
  await recordEvents(h.a.ctx, h.project.id, [txEvent("newer")]);

  // Six days later the first is still there; a moment past its 7 days it is gone.
  h.a.clock.advance(6 * 24 * 60 * 60 * 1000 - 1);
  assert.deepEqual((await feed(h)).events.map((e) => e.key), ["old", "newer"]);
  h.a.clock.advance(1);
  const page = await feed(h);
  assert.deepEqual([page.events.map((e) => e.key), page.next], [["newer"], "2"]);
  h.a.clock.advance(24 * 60 * 60 * 1000);
  assert.deepEqual(await feed(h), { events: [], next: "2" });
  assert.deepEqual(await feed(h, "?after=2"), { events: [], next: "2" });
});

Deno.test("With events off, every event still goes to the feed and nothing is queued", async () => {
  await using h = await startEventsHarness({ eventsOn: false });
  await linkPlayerWallet(h.a.ctx, h.project.id, { userId: 3, address: ADDRESS });
  await unlinkPlayerWallet(h.a.ctx, h.project.id, 3);
  await drain(h.a.worker);
  assert.deepEqual((await feed(h)).events.map((e) => [e.id, e.type, e.userId]), [
    ["1", "wallet_linked", 3],
    ["2", "wallet_unlinked", 3],
  ]);
  assert.deepEqual(h.standIn.attempts(), []);
});

Deno.test("An event whose publish was lost (500 four times) is still in the feed under its id", async () => {
  // Given a messaging service that answers 500 to every attempt of the first event.
  await using h = await startEventsHarness();
  h.standIn.failNext("500", { count: 4 });
  await linkPlayerWallet(h.a.ctx, h.project.id, { userId: 9, address: ADDRESS });
  for (const wait of [0, 500, 1_000, 2_000]) {
    h.a.clock.advance(wait);
    await drain(h.a.worker);
  }
  assert.equal(h.standIn.attempts().length, 4);
  assert.deepEqual(h.standIn.inbox(), []);
  const [delivery] = await listDeliveries(h.a.kv, h.project.id);
  assert.ok(delivery);
  assert.deepEqual([delivery.outcome, delivery.eventId], ["gave_up", "1"]);

  // When the next event is published fine.
  await saveEventSettings(h.a.ctx, h.project.id, { topic: "svc" });
  await unlinkPlayerWallet(h.a.ctx, h.project.id, 9);
  await drain(h.a.worker);

  // Then a game server following the feed still learns of both, and the message it did get
  // carries the id it will dedupe by.
  assert.deepEqual(h.standIn.inbox().map((m) => (m.data as { id: string }).id), ["2"]);
  const { events } = await feed(h);
  assert.deepEqual(events.map((e) => [e.id, e.type, e.userId]), [
    ["1", "wallet_linked", 9],
    ["2", "wallet_unlinked", 9],
  ]);
});

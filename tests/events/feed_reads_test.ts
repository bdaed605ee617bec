// Reads of the event feed at a game's scale: not counted toward the quotas but under a limit of
// their own, a cheap start at the end (`after=latest`), and answers from the instance's known end.
import assert from "node:assert/strict";
import { recordEvents } from "../../lib/events/record.ts";
import { FeedReadLimit, MAX_FEED_READ_PROJECTS } from "../../lib/quota/feed_reads.ts";
import { FEED_READS_PER_SECOND, FEED_STORE_EVENTS_PER_SECOND } from "../../core/feed_limits.ts";
import { ManualClock } from "../../core/clock.ts";
import { REQUESTS_PER_MINUTE } from "../../lib/quota/quota_plan.ts";
import { HEAD_TTL_MS } from "../../lib/events/feed_heads.ts";
import { createTestProject } from "../support/test_app.ts";
import { type EventsHarness, startEventsHarness } from "../support/events_harness.ts";
import { call } from "../support/test_app.ts";
import { countListings } from "../support/list_counts.ts";
import type { Hono } from "hono";

type Page = { events: Array<{ id: string; type: string; at?: number }>; next: string };

async function read(app: Hono, apiKey: string, query = ""): Promise<Response> {
  return await call(app, `/v1/events${query}`, { apiKey });
}

async function page(app: Hono, apiKey: string, query = ""): Promise<Page> {
  const response = await read(app, apiKey, query);
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return body;
}

async function codeOf(response: Response): Promise<[number, string]> {
  return [response.status, (await response.json()).error?.code];
}

function ping(h: EventsHarness, at: number) {
  return recordEvents(h.a.ctx, h.project.id, [{ type: "ping", at }], { deliver: false });
}

Deno.test("GET /v1/events is not counted toward the request quotas", async () => {
  await using h = await startEventsHarness({ eventsOn: false });
  // Given a game whose servers read the feed far more than 600 times in this minute.
  for (let i = 0; i < 3 * REQUESTS_PER_MINUTE; i++) {
    if (i > 0 && i % FEED_READS_PER_SECOND === 0) h.a.clock.advance(1_000);
    assert.equal((await read(h.a.app, h.apiKey)).status, 200, `feed read ${i + 1}`);
  }
  // Then the minute's 600 counted requests are all still there, and the 601st is refused.
  for (let i = 0; i < REQUESTS_PER_MINUTE; i++) {
    const response = await call(h.a.app, "/v1/project", { apiKey: h.apiKey });
    assert.equal(response.status, 200, `counted request ${i + 1}`);
  }
  const over = await call(h.a.app, "/v1/project", { apiKey: h.apiKey });
  assert.deepEqual(await codeOf(over), [429, "rate_limited"]);
  // And with the quota used up, the feed still answers: a game keeps in sync while it waits.
  h.a.clock.advance(1_000);
  assert.equal((await read(h.a.app, h.apiKey)).status, 200);
});

Deno.test("GET /v1/events answers feed_rate_limited past its reads a second per project", async (t) => {
  await using h = await startEventsHarness({ eventsOn: false });
  const other = await createTestProject(h.a);

  await t.step("the reads of one second, then feed_rate_limited", async () => {
    for (let i = 0; i < FEED_READS_PER_SECOND; i++) {
      assert.equal((await read(h.a.app, h.apiKey)).status, 200, `read ${i + 1}`);
    }
    const over = await read(h.a.app, h.apiKey);
    assert.deepEqual(await codeOf(over), [429, "feed_rate_limited"]);
  });

  await t.step("another project reads on, and the key is checked first", async () => {
    assert.equal((await read(h.a.app, other.apiKey)).status, 200);
    assert.deepEqual(await codeOf(await read(h.a.app, "bl_not-a-key")), [401, "unauthorized"]);
  });

  await t.step("the next second, the project reads again", async () => {
    h.a.clock.advance(1_000);
    assert.equal((await read(h.a.app, h.apiKey)).status, 200);
  });
});

Deno.test("GET /v1/events: reads behind the end decode a bounded number of stored events a second; reads at the end go on", async (t) => {
  await using h = await startEventsHarness({ eventsOn: false });
  const other = await createTestProject(h.a);
  // Given a week's feed of 1,500 events, none a tx
  for (let i = 0; i < 1_500; i += 50) {
    const pings = Array.from({ length: 50 }, (_, j) => ({ type: "ping" as const, at: i + j }));
    await recordEvents(h.a.ctx, h.project.id, pings, { deliver: false });
  }
  await recordEvents(h.a.ctx, other.project.id, [{ type: "ping", at: 0 }], { deliver: false });
  // Every feed entry listed is decoded whole: count its events.
  const feedReads = countListings(
    h.a.kv,
    "events",
    (chunk) => (chunk as { events: unknown[] }).events.length,
  );

  await t.step(
    "an old cursor with a filter matching nothing, hammered, is refused past the budget",
    async () => {
      const statuses: Array<[number, string]> = [];
      for (let i = 0; i < 100; i++) {
        const response = await read(h.a.app, h.apiKey, "?types=tx&after=0");
        statuses.push(response.status === 200 ? [200, ""] : await codeOf(response));
        if (response.status === 200) await response.body?.cancel();
      }
      const answered = statuses.filter(([status]) => status === 200).length;
      assert.ok(answered >= 1 && answered < 100, `answered ${answered} of 100`);
      assert.deepEqual(
        statuses.slice(answered),
        Array(100 - answered).fill([429, "feed_rate_limited"]),
      );
      // At most the second's budget, and part of one entry past it
      assert.ok(
        feedReads.entries <= FEED_STORE_EVENTS_PER_SECOND + 50,
        `${feedReads.entries} events read`,
      );
    },
  );

  await t.step(
    "in the same second, reads at the end of the feed, and other projects, go on",
    async () => {
      assert.deepEqual(await page(h.a.app, h.apiKey, "?after=1500"), { events: [], next: "1500" });
      assert.deepEqual(await page(h.a.app, h.apiKey, "?after=latest"), {
        events: [],
        next: "1500",
      });
      assert.deepEqual((await page(h.a.app, other.apiKey, "?after=0")).next, "1");
    },
  );

  await t.step(
    "with part of a read's budget back, a read scans less and says where to go on",
    async () => {
      h.a.clock.advance(50);
      const short = await page(h.a.app, h.apiKey, "?types=tx&after=0");
      assert.deepEqual(short, { events: [], next: String(FEED_STORE_EVENTS_PER_SECOND / 20) });
      const none = await read(h.a.app, h.apiKey, `?types=tx&after=${short.next}`);
      assert.deepEqual(await codeOf(none), [429, "feed_rate_limited"]);
    },
  );

  await t.step("a second later, a whole read again", async () => {
    h.a.clock.advance(1_000);
    assert.deepEqual(await page(h.a.app, h.apiKey, "?types=tx&after=500"), {
      events: [],
      next: "1500",
    });
  });
});

Deno.test("GET /v1/events?after=latest answers the end of the feed, where a new reader starts", async () => {
  await using h = await startEventsHarness({ eventsOn: false });
  assert.deepEqual(await page(h.a.app, h.apiKey, "?after=latest"), { events: [], next: "0" });
  for (let i = 1; i <= 3; i++) await ping(h, i);
  const start = await page(h.a.app, h.apiKey, "?after=latest&types=tx&limit=1");
  assert.deepEqual(start, { events: [], next: "3" });
  await ping(h, 4);
  const after = await page(h.a.app, h.apiKey, `?after=${start.next}`);
  assert.deepEqual([after.events.map((e) => e.at), after.next], [[4], "4"]);
  const response = await read(h.a.app, h.apiKey, "?after=newest");
  assert.deepEqual(await codeOf(response), [400, "invalid_request"]);
});

Deno.test("GET /v1/events?after=latest&recent= starts at the events of the last seconds", async (t) => {
  await using h = await startEventsHarness({ eventsOn: false });
  await ping(h, 1);
  h.a.clock.advance(20_000);
  await ping(h, 2);
  h.a.clock.advance(5_000);
  await ping(h, 3);
  h.a.clock.advance(5_000);

  await t.step(
    "the events recorded in the window, oldest first, and the cursor after them",
    async () => {
      const recent = await page(h.a.app, h.apiKey, "?after=latest&recent=10");
      assert.deepEqual([recent.events.map((e) => e.at), recent.next], [[2, 3], "3"]);
      const all = await page(h.a.app, h.apiKey, "?after=latest&recent=3600&limit=1");
      assert.deepEqual([all.events.map((e) => e.at), all.next], [[1], "1"]);
    },
  );

  await t.step("nothing in the window: no events and the end", async () => {
    assert.deepEqual(await page(h.a.app, h.apiKey, "?after=latest&recent=4"), {
      events: [],
      next: "3",
    });
    assert.deepEqual(await page(h.a.app, h.apiKey, "?after=latest&recent=0"), {
      events: [],
      next: "3",
    });
  });

  await t.step("it looks back over at most the last 1,000 events", async () => {
    for (let i = 0; i < 1_500; i += 50) {
      const pings = Array.from({ length: 50 }, (_, j) => ({ type: "ping" as const, at: i + j }));
      await recordEvents(h.a.ctx, h.project.id, pings, { deliver: false });
    }
    const recent = await page(h.a.app, h.apiKey, "?after=latest&recent=60&limit=2");
    assert.deepEqual(recent.events.map((e) => e.id), ["504", "505"]);
  });

  await t.step("recent only with after=latest, and at most an hour", async () => {
    for (const query of ["?recent=10", "?after=1&recent=10", "?after=latest&recent=3601"]) {
      const response = await read(h.a.app, h.apiKey, query);
      const body = await response.json();
      assert.deepEqual([response.status, body.error.code], [400, "invalid_request"], query);
      assert.match(body.error.message, /^recent: /, query);
    }
  });
});

Deno.test("An instance answers a read at the end of the feed from the end it knows, at most a second old", async () => {
  // Given two instances on one store, and a reader at the end of the feed on instance a.
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using h = await startEventsHarness({ kvPath: path, eventsOn: false });
  const b = await h.instance({ owner: "b" });
  await ping(h, 1);
  const start = await page(h.a.app, h.apiKey);
  assert.equal(start.next, "1");

  // When instance b records an event.
  await recordEvents(b.ctx, h.project.id, [{ type: "ping", at: 2 }], { deliver: false });

  // Then instance a answers "nothing new" from the end it read less than a second ago, without
  // asking the store: the reader keeps its cursor and loses nothing.
  assert.deepEqual(await page(h.a.app, h.apiKey, "?after=1"), { events: [], next: "1" });
  // While b, which wrote it, answers it at once.
  assert.deepEqual((await page(b.app, h.apiKey, "?after=1")).next, "2");
  // And a cursor past what a knows (from b) is checked against the store, not refused.
  assert.deepEqual(await page(h.a.app, h.apiKey, "?after=2"), { events: [], next: "2" });

  // A second on, a reads the store again and answers the event.
  h.a.clock.advance(HEAD_TTL_MS);
  const later = await page(h.a.app, h.apiKey, "?after=1");
  assert.deepEqual([later.events.map((e) => e.at), later.next], [[2], "2"]);
  await Deno.remove(path).catch(() => {});
});

Deno.test("FeedReadLimit never refuses everyone: with its table full within one second, a new project still reads", () => {
  const limit = new FeedReadLimit(new ManualClock(Date.UTC(2026, 10, 25, 12, 0, 0)));
  // Given: as many projects as the table holds read in the same second
  for (let i = 0; i < MAX_FEED_READ_PROJECTS; i++) assert.ok(limit.take(`project-${i}`));

  // When: one more project reads in that second, then another of the first ones
  // Then: both are answered, and the limit per project still holds
  assert.equal(limit.take("newcomer"), true);
  assert.equal(limit.take(`project-${MAX_FEED_READ_PROJECTS - 1}`), true);
  for (let i = 1; i < FEED_READS_PER_SECOND; i++) assert.ok(limit.take("newcomer"));
  assert.equal(limit.take("newcomer"), false);
});

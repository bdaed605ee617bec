import assert from "node:assert/strict";
import { startMessagingStandIn } from "../../sandbox/roblox/mod.ts";

const UNIVERSE = "4242";
const KEY = "test-publish-key";

function publish(
  url: string,
  body: unknown,
  init: { key?: string; universe?: string; signal?: AbortSignal } = {},
) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (init.key !== "") headers["x-api-key"] = init.key ?? KEY;
  return fetch(`${url}/cloud/v2/universes/${init.universe ?? UNIVERSE}:publishMessage`, {
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: init.signal ?? null,
  });
}

function event(n: number) {
  return { topic: "svc", message: JSON.stringify({ v: 1, type: "ping", at: n }) };
}

Deno.test("startMessagingStandIn() accepts a publish like Open Cloud and keeps it in the inbox", async () => {
  let clock = 1_700_000_000_000;
  const standIn = await startMessagingStandIn({
    now: () => clock,
    keys: [{ apiKey: KEY, universeId: UNIVERSE }],
  });
  try {
    // When
    const res = await publish(standIn.url, event(1));
    clock += 5;
    const raw = await publish(standIn.url, { topic: "t", message: "not json" });

    // Then
    assert.equal(res.status, 200);
    assert.equal(await res.text(), "");
    assert.equal(raw.status, 200);
    await raw.body?.cancel();
    assert.deepEqual(standIn.inbox(), [
      {
        universeId: UNIVERSE,
        topic: "svc",
        message: '{"v":1,"type":"ping","at":1}',
        data: { v: 1, type: "ping", at: 1 },
        receivedAt: 1_700_000_000_000,
      },
      {
        universeId: UNIVERSE,
        topic: "t",
        message: "not json",
        data: null,
        receivedAt: 1_700_000_000_005,
      },
    ]);
    assert.deepEqual(standIn.attempts().map((a) => a.status), [200, 200]);
  } finally {
    await standIn.close();
  }
});

Deno.test("startMessagingStandIn() refuses bad keys and bad bodies", async (t) => {
  const standIn = await startMessagingStandIn();
  standIn.registerKey(KEY, UNIVERSE);
  standIn.registerKey("other-key", "777");
  try {
    await t.step("401 without a key or with an unknown key", async () => {
      for (const key of ["", "unknown-key"]) {
        const res = await publish(standIn.url, event(1), { key });
        assert.equal(res.status, 401);
        assert.deepEqual(await res.json(), { errors: [{ code: 0, message: "Invalid API Key" }] });
      }
    });

    await t.step("403 with a key for another universe", async () => {
      const res = await publish(standIn.url, event(1), { key: "other-key" });
      assert.equal(res.status, 403);
      assert.equal((await res.json()).code, "PERMISSION_DENIED");
    });

    await t.step("400 for bodies outside the documented limits", async () => {
      const bodies: unknown[] = [
        "{not json",
        { message: "x" },
        { topic: "", message: "x" },
        { topic: "t".repeat(81), message: "x" },
        { topic: "t", message: "m".repeat(1025) },
        { topic: "t", message: { v: 1 } },
        { topic: "t", message: "x", extra: true },
      ];
      for (const body of bodies) {
        const res = await publish(standIn.url, body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal((await res.json()).code, "INVALID_ARGUMENT");
      }
    });

    await t.step("accepts a topic of 80 and a message of 1,024 characters", async () => {
      const res = await publish(standIn.url, { topic: "t".repeat(80), message: "m".repeat(1024) });
      assert.equal(res.status, 200);
      await res.body?.cancel();
    });

    // Then
    assert.equal(standIn.inbox().length, 1);
    assert.deepEqual(standIn.attempts().map((a) => a.status), [
      401,
      401,
      403,
      ...Array(7).fill(400),
      200,
    ]);
  } finally {
    await standIn.close();
  }
});

Deno.test("startMessagingStandIn() answers the next publishes with forced failures", async (t) => {
  const standIn = await startMessagingStandIn({ keys: [{ apiKey: KEY, universeId: UNIVERSE }] });
  try {
    await t.step("429 with retry-after, N times, then normal", async () => {
      standIn.failNext("429", { count: 2, retryAfter: 3 });
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        const res = await publish(standIn.url, event(i));
        statuses.push([res.status, res.headers.get("retry-after")]);
        await res.body?.cancel();
      }
      assert.deepEqual(statuses, [[429, "3"], [429, "3"], [200, null]]);
      assert.equal(standIn.inbox().length, 1);
    });

    await t.step("500 then 401 in the order queued", async () => {
      standIn.failNext("500");
      standIn.failNext("401");
      const statuses = [];
      for (let i = 0; i < 3; i++) {
        const res = await publish(standIn.url, event(i));
        statuses.push(res.status);
        await res.body?.cancel();
      }
      assert.deepEqual(statuses, [500, 401, 200]);
    });

    await t.step("hang never answers until the client gives up", async () => {
      standIn.failNext("hang");
      const error = await publish(standIn.url, event(9), { signal: AbortSignal.timeout(100) })
        .then(() => null, (e: Error) => e);
      assert.equal(error?.name, "TimeoutError");
      const res = await publish(standIn.url, event(10));
      assert.equal(res.status, 200);
      await res.body?.cancel();
    });

    // Then: every attempt is counted with its answer; the hung one has none
    assert.deepEqual(
      standIn.attempts().map((a) => a.status),
      [429, 429, 200, 500, 401, 200, null, 200],
    );
    assert.deepEqual(standIn.inbox().map((m) => (m.data as { at: number }).at), [2, 2, 10]);
  } finally {
    await standIn.close();
  }
});

Deno.test("startMessagingStandIn() exposes its controls and inbox over HTTP", async (t) => {
  const standIn = await startMessagingStandIn();
  const control = (path: string, body: unknown) =>
    fetch(`${standIn.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  try {
    await t.step("POST /_control/keys registers a key", async () => {
      const res = await control("/_control/keys", { apiKey: KEY, universeId: UNIVERSE });
      assert.equal(res.status, 200);
      await res.body?.cancel();
      const published = await publish(standIn.url, event(1));
      assert.equal(published.status, 200);
      await published.body?.cancel();
    });

    await t.step("POST /_control/mode queues failures and normal clears them", async () => {
      let res = await control("/_control/mode", { mode: "500", count: 3 });
      assert.deepEqual(await res.json(), {
        pending: [{ mode: "500", count: 3 }],
      });
      res = await control("/_control/mode", { mode: "normal" });
      assert.deepEqual(await res.json(), { pending: [] });
      res = await control("/_control/mode", { mode: "teapot" });
      assert.equal(res.status, 400);
      await res.body?.cancel();
    });

    await t.step("GET /_inbox, /_inbox.html and /_attempts show what arrived", async () => {
      const published = await publish(standIn.url, { topic: "second<topic>", message: "{}" });
      await published.body?.cancel();
      const inbox = await (await fetch(`${standIn.url}/_inbox`)).json();
      assert.deepEqual(inbox.map((m: { topic: string }) => m.topic), ["svc", "second<topic>"]);
      const page = await (await fetch(`${standIn.url}/_inbox.html`)).text();
      assert.ok(page.indexOf("second&lt;topic&gt;") < page.indexOf("<b>svc</b>"), "newest first");
      const attempts = await (await fetch(`${standIn.url}/_attempts`)).json();
      assert.equal(attempts.length, 2);
    });

    await t.step("DELETE /_inbox empties it", async () => {
      const res = await fetch(`${standIn.url}/_inbox`, { method: "DELETE" });
      await res.body?.cancel();
      assert.deepEqual(standIn.inbox(), []);
    });
  } finally {
    await standIn.close();
  }
});

Deno.test("waitForMessages() resolves once n messages arrived and rejects on timeout", async () => {
  const standIn = await startMessagingStandIn({ keys: [{ apiKey: KEY, universeId: UNIVERSE }] });
  try {
    // Given
    const waiting = standIn.waitForMessages(2, 5_000);

    // When
    for (const n of [1, 2]) {
      const res = await publish(standIn.url, event(n));
      await res.body?.cancel();
    }

    // Then
    assert.equal((await waiting).length, 2);
    await assert.rejects(standIn.waitForMessages(3, 10), /Timed out waiting for 3 messages/);
  } finally {
    await standIn.close();
  }
});

Deno.test("GET /_inbox?after=&wait= answers the messages after an index, holding the answer until one comes", async () => {
  const standIn = await startMessagingStandIn({ keys: [{ apiKey: KEY, universeId: UNIVERSE }] });
  try {
    await (await publish(standIn.url, event(1))).body?.cancel();
    const after = async (query: string) =>
      await (await fetch(`${standIn.url}/_inbox?${query}`)).json();
    assert.deepEqual((await after("after=0")).map((m: { data: { at: number } }) => m.data.at), [1]);
    assert.deepEqual(await after("after=1"), []);
    // A subscriber's long poll: answered by the next publish, not by its time running out.
    const started = performance.now();
    const polled = after("after=1&wait=20");
    await new Promise((resolve) => setTimeout(resolve, 100));
    await (await publish(standIn.url, event(2))).body?.cancel();
    assert.deepEqual((await polled).map((m: { data: { at: number } }) => m.data.at), [2]);
    assert.ok(performance.now() - started < 5_000, "answered by the publish");
    const refused = await fetch(`${standIn.url}/_inbox?after=-1`);
    assert.equal(refused.status, 400);
    await refused.body?.cancel();
  } finally {
    await standIn.close();
  }
});

Deno.test("startMessagingStandIn({ topicLimitPerMinute }) answers 429 past a topic's publishes of the minute", async () => {
  let clock = Date.UTC(2026, 0, 1, 12, 0, 10);
  const standIn = await startMessagingStandIn({
    now: () => clock,
    keys: [{ apiKey: KEY, universeId: UNIVERSE }],
    topicLimitPerMinute: 2,
  });
  try {
    const statuses = async (body: unknown) => {
      const res = await publish(standIn.url, body);
      await res.body?.cancel();
      return [res.status, res.headers.get("retry-after")];
    };
    assert.deepEqual(await statuses(event(1)), [200, null]);
    assert.deepEqual(await statuses(event(2)), [200, null]);
    assert.deepEqual(await statuses(event(3)), [429, "50"]);
    // Another topic has its own count; the next minute the topic publishes again.
    assert.deepEqual(await statuses({ topic: "other", message: "{}" }), [200, null]);
    clock += 50_000;
    assert.deepEqual(await statuses(event(4)), [200, null]);
    assert.equal(standIn.inbox().length, 4);
  } finally {
    await standIn.close();
  }
});

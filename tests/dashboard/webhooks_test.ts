// The webhooks page and its actions through the real app: JSON for scripts, plain forms for
// browsers, every error code provoked, and the secret shown once and stored only sealed.
import assert from "node:assert/strict";
import { assertErrorCode } from "../support/assertions.ts";
import {
  createProjectAs,
  getPage,
  postForm,
  postJson,
  signInDeveloper,
  type TestDeveloper,
} from "../support/dashboard.ts";
import { browse } from "../support/sign_in.ts";
import { testConfig } from "../support/test_app.ts";
import {
  HOOK_HOST,
  startWebhooksHarness,
  type WebhooksHarness,
} from "../support/webhooks_harness.ts";
import { listWebhookEndpoints } from "../../kv/webhooks.ts";
import { listAuditEntries } from "../../kv/audit_log.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { verifyWebhook } from "../../sdk/ts/src/verify_webhook.ts";

interface Setup {
  h: WebhooksHarness;
  dev: TestDeveloper;
  project: { id: string };
  base: string;
}

async function setUp(h: WebhooksHarness): Promise<Setup> {
  const dev = await signInDeveloper(h.t.app);
  const project = await createProjectAs(h.t.app, dev);
  return { h, dev, project, base: `/dashboard/projects/${project.id}/webhooks` };
}

async function addAs(s: Setup, url: string): Promise<Response> {
  return await postJson(s.h.t.app, s.base, { url }, { jar: s.dev.jar });
}

Deno.test("POST .../webhooks adds an endpoint and answers its secret once; the store holds it sealed", async () => {
  await using h = await startWebhooksHarness();
  const s = await setUp(h);
  // When
  const res = await addAs(s, h.hookUrl("/in"));
  // Then
  assert.equal(res.status, 201);
  const body = await res.json();
  assert.match(body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.deepEqual(Object.keys(body.endpoint).sort(), [
    "createdAt",
    "createdBy",
    "id",
    "previousSecretUntil",
    "rotatedAt",
    "url",
  ]);
  assert.equal(body.endpoint.url, h.hookUrl("/in"));
  const [stored] = await listWebhookEndpoints(h.t.kv, s.project.id);
  assert.ok(stored);
  assert.ok(!JSON.stringify(stored).includes(body.secret.slice(6)), "no plaintext secret stored");
  assert.match(stored.secretEnc, /^v2\.[^.]+\.webhook_secret\./);
  // And the page and its JSON never show it again
  const page = await (await getPage(h.t.app, s.base, s.dev.jar)).text();
  assert.ok(page.includes(h.hookUrl("/in")) && !page.includes(body.secret));
  const listed = await browse(h.t.app, s.base, {
    jar: s.dev.jar,
    headers: { accept: "application/json" },
  });
  const json = await listed.json();
  assert.deepEqual(json.endpoints, [body.endpoint]);
  assert.ok(!JSON.stringify(json).includes(body.secret));
});

Deno.test("A browser's form adds an endpoint and sees the secret on the next page only", async () => {
  await using h = await startWebhooksHarness();
  const s = await setUp(h);
  const res = await postForm(h.t.app, s.base, { url: h.hookUrl() }, { jar: s.dev.jar });
  assert.deepEqual([res.status, res.headers.get("location")], [303, s.base]);
  const first = await (await getPage(h.t.app, s.base, s.dev.jar)).text();
  const secret = /data-testid="new-secret-value">(whsec_[^<]+)</.exec(first)?.[1];
  assert.ok(secret, "the secret is shown after the add");
  const again = await (await getPage(h.t.app, s.base, s.dev.jar)).text();
  assert.ok(!again.includes(secret), "and not on the next view");
});

// The whole message for a name whose addresses are not all public: the name, never what it resolved
// to (nor what kind of address that is).
function notPublic(host: string): RegExp {
  return new RegExp(`^url: ${host.replaceAll(".", "\\.")} does not resolve to a public address$`);
}

Deno.test("Adding refuses URLs the rules do not allow, with invalid_settings", async (t) => {
  await using h = await startWebhooksHarness({ config: { webhooksAllowLoopback: false } });
  const s = await setUp(h);
  h.names.set("private.example.test", ["10.1.2.3"]);
  h.names.set("mixed.example.test", ["93.184.216.34", "192.168.1.20"]);
  h.names.set("metadata.example.test", ["169.254.169.254"]);
  h.names.set("mapped.example.test", ["::ffff:127.0.0.1"]);
  const cases: [string, unknown, RegExp][] = [
    ["plain http", "http://hooks.example.test/in", /url: must be an https:\/\/ URL/],
    ["not a URL", "hooks", /url: must be an https:\/\/ URL/],
    ["not text", 42, /url: must be an https:\/\/ URL/],
    ["credentials", "https://user:pw@hooks.example.test/", /user name or password/],
    ["a fragment", "https://hooks.example.test/#x", /fragment/],
    ["a private literal", "https://10.0.0.8/in", /10\.0\.0\.8 is a private address/],
    ["an IPv6 loopback literal", "https://[::1]/in", /::1 is a loopback address/],
    ["loopback by name", `https://${HOOK_HOST}/in`, notPublic(HOOK_HOST)],
    ["a private name", "https://private.example.test/", notPublic("private.example.test")],
    ["one private address of two", "https://mixed.example.test/", notPublic("mixed.example.test")],
    ["cloud metadata", "https://metadata.example.test/", notPublic("metadata.example.test")],
    ["IPv4-mapped loopback", "https://mapped.example.test/", notPublic("mapped.example.test")],
    ["a name that does not resolve", "https://nowhere.example.test/", /does not resolve/],
    ["too long", `https://hooks.example.test/${"a".repeat(2_000)}`, /at most 2000/],
  ];
  for (const [name, url, message] of cases) {
    await t.step(name, async () => {
      const res = await postJson(h.t.app, s.base, { url }, { jar: s.dev.jar });
      const body = await assertErrorCode(res, 400, "invalid_settings");
      assert.match(body.error.message, message);
    });
  }
  assert.equal((await listWebhookEndpoints(h.t.kv, s.project.id)).length, 0);
});

Deno.test("A project takes 5 endpoints, each URL once: webhook_limit_reached, invalid_settings", async () => {
  await using h = await startWebhooksHarness();
  const s = await setUp(h);
  for (let i = 0; i < 5; i++) assert.equal((await addAs(s, h.hookUrl(`/${i}`))).status, 201);
  await assertErrorCode(await addAs(s, h.hookUrl("/5")), 403, "webhook_limit_reached");
  const duplicate = await addAs(s, h.hookUrl("/4"));
  // At the limit the limit is what is answered; below it, the duplicate is refused by its URL.
  assert.equal(duplicate.status, 403);
  await duplicate.body?.cancel();
  // Another endpoint than /4 (ids made in one millisecond of the test clock list in any order).
  const other = (await listWebhookEndpoints(h.t.kv, s.project.id)).find((e) =>
    !e.url.endsWith("/4")
  );
  await postJson(h.t.app, `${s.base}/${other!.id}/delete`, undefined, { jar: s.dev.jar });
  const again = await assertErrorCode(await addAs(s, h.hookUrl("/4")), 400, "invalid_settings");
  assert.match(again.error.message, /already an endpoint of this project/);
});

Deno.test("Concurrent adds never pass 5 endpoints", async () => {
  await using h = await startWebhooksHarness();
  const s = await setUp(h);
  const answers = await Promise.all(
    Array.from({ length: 12 }, (_, i) => addAs(s, h.hookUrl(`/race/${i}`))),
  );
  const statuses = await Promise.all(answers.map(async (r) => {
    await r.body?.cancel();
    return r.status;
  }));
  assert.equal(statuses.filter((status) => status === 201).length, 5);
  assert.equal((await listWebhookEndpoints(h.t.kv, s.project.id)).length, 5);
});

Deno.test("Remove, rotate, test and replay answer webhook_not_found and delivery_not_found", async () => {
  await using h = await startWebhooksHarness();
  const s = await setUp(h);
  const missing = "01JD0000000000000000000000";
  const removed = await postJson(h.t.app, `${s.base}/${missing}/delete`, undefined, {
    jar: s.dev.jar,
  });
  assert.deepEqual(await removed.json(), { ok: true, removed: false });
  for (const action of ["rotate", "test"]) {
    const res = await postJson(h.t.app, `${s.base}/${missing}/${action}`, {}, { jar: s.dev.jar });
    await assertErrorCode(res, 404, "webhook_not_found");
  }
  const replay = await postJson(h.t.app, `${s.base}/deliveries/${missing}/replay`, undefined, {
    jar: s.dev.jar,
  });
  await assertErrorCode(replay, 404, "delivery_not_found");
});

Deno.test("Send test posts a signed ping to that endpoint only and logs it", async () => {
  await using h = await startWebhooksHarness();
  const s = await setUp(h);
  const other = await h.receiverAt();
  const { endpoint, secret } = await (await addAs(s, h.hookUrl())).json();
  await (await addAs(s, `https://${HOOK_HOST}:${other.port}/other`)).body?.cancel();
  // When
  const res = await postJson(h.t.app, `${s.base}/${endpoint.id}/test`, undefined, {
    jar: s.dev.jar,
  });
  // Then
  const result = await res.json();
  assert.deepEqual([result.ok, result.status], [true, 200]);
  assert.equal(result.message, "Delivered: the endpoint answered HTTP 200");
  const [got] = h.receiver.received();
  assert.equal(JSON.parse(got!.body).type, "ping");
  assert.equal(JSON.parse(got!.body).id, result.eventId);
  const now = Math.floor(h.t.clock.now() / 1000);
  await verifyWebhook(secret, new Headers(got!.headers), got!.body, now);
  await h.drain();
  assert.equal(other.received().length, 0, "the other endpoint gets no test");
  const page = await (await browse(h.t.app, s.base, {
    jar: s.dev.jar,
    headers: { accept: "application/json" },
  })).json();
  assert.deepEqual(
    page.log.deliveries.map((d: { trigger: string; status: string }) => [d.trigger, d.status]),
    [["test", "delivered"]],
  );
  // And a failing endpoint's answer is shown as it is
  h.receiver.answerNext({ status: 500, body: "boom" });
  const failed = await (await postJson(h.t.app, `${s.base}/${endpoint.id}/test`, undefined, {
    jar: s.dev.jar,
  })).json();
  assert.deepEqual([failed.ok, failed.status, failed.message], [
    false,
    500,
    "Not delivered: HTTP 500",
  ]);
});

Deno.test("Replay queues the event again, with the same id, as a new delivery", async () => {
  await using h = await startWebhooksHarness();
  const s = await setUp(h);
  const { endpoint } = await (await addAs(s, h.hookUrl())).json();
  h.receiver.answerNext({ status: 400 });
  const [event] = await recordEvents(h.t.ctx, s.project.id, [{
    type: "wallet_linked",
    userId: 5,
    address: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
  }]);
  await h.drain();
  const list = async () =>
    (await (await browse(h.t.app, `${s.base}?endpoint=${endpoint.id}`, {
      jar: s.dev.jar,
      headers: { accept: "application/json" },
    })).json()).log.deliveries;
  const [refused] = await list();
  assert.equal(refused.status, "retrying");
  // When the developer, who fixed the receiver, replays it from the page (a plain form)
  const res = await postForm(h.t.app, `${s.base}/deliveries/${refused.id}/replay`, {}, {
    jar: s.dev.jar,
  });
  assert.deepEqual([res.status, res.headers.get("location")], [303, `${s.base}#log`]);
  const [queued] = await list();
  assert.deepEqual([queued.status, queued.trigger, queued.eventId], [
    "queued",
    "replay",
    event!.id,
  ]);
  await h.drain();
  // Then it is delivered at once, a new entry beside the one still waiting for its next attempt
  const [replayed, original] = await list();
  assert.deepEqual([replayed.status, original.status], ["delivered", "retrying"]);
  const [first, second] = h.receiver.received();
  assert.equal(first!.headers["webhook-id"], second!.headers["webhook-id"]);
});

Deno.test("Tests and replays count against the test event limit: rate_limited", async () => {
  await using h = await startWebhooksHarness({
    config: { abuseLimits: { ...testConfig().abuseLimits, test_ping: 2 } },
  });
  const s = await setUp(h);
  const { endpoint } = await (await addAs(s, h.hookUrl())).json();
  for (let i = 0; i < 2; i++) {
    const ok = await postJson(h.t.app, `${s.base}/${endpoint.id}/test`, undefined, {
      jar: s.dev.jar,
    });
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
  }
  const refused = await postJson(h.t.app, `${s.base}/${endpoint.id}/test`, undefined, {
    jar: s.dev.jar,
  });
  await assertErrorCode(refused, 429, "rate_limited");
  const replay = await postJson(
    h.t.app,
    `${s.base}/deliveries/01JD0000000000000000000000/replay`,
    undefined,
    {
      jar: s.dev.jar,
    },
  );
  await assertErrorCode(replay, 429, "rate_limited");
});

Deno.test("Another developer's project, no session and a foreign origin are refused", async () => {
  await using h = await startWebhooksHarness();
  const s = await setUp(h);
  const stranger = await signInDeveloper(h.t.app);
  const theirs = await postJson(h.t.app, s.base, { url: h.hookUrl() }, { jar: stranger.jar });
  await assertErrorCode(theirs, 404, "project_not_found");
  const page = await browse(h.t.app, s.base, {
    jar: stranger.jar,
    headers: { accept: "application/json" },
  });
  await assertErrorCode(page, 404, "project_not_found");
  await assertErrorCode(
    await postJson(h.t.app, s.base, { url: h.hookUrl() }),
    401,
    "not_signed_in",
  );
  const foreign = await postJson(h.t.app, s.base, { url: h.hookUrl() }, {
    jar: s.dev.jar,
    origin: "https://evil.example",
  });
  await assertErrorCode(foreign, 403, "bad_origin");
  assert.equal((await listWebhookEndpoints(h.t.kv, s.project.id)).length, 0);
});

Deno.test("Every webhook change is in the audit log, made in its own commit, with no secret", async () => {
  await using h = await startWebhooksHarness();
  const s = await setUp(h);
  // When: add, test, rotate, replay, remove, as the developer
  const added = await (await addAs(s, h.hookUrl())).json();
  const id = added.endpoint.id;
  const tested = await (await postJson(h.t.app, `${s.base}/${id}/test`, undefined, {
    jar: s.dev.jar,
  })).json();
  const rotated = await (await postJson(h.t.app, `${s.base}/${id}/rotate`, {
    dropPrevious: true,
  }, { jar: s.dev.jar })).json();
  const replayed = await (await postJson(
    h.t.app,
    `${s.base}/deliveries/${tested.deliveryId}/replay`,
    undefined,
    { jar: s.dev.jar },
  )).json();
  await (await postJson(h.t.app, `${s.base}/${id}/delete`, undefined, { jar: s.dev.jar })).body
    ?.cancel();
  // And a refused change records nothing
  await (await addAs(s, "http://not-https.example/hook")).body?.cancel();

  // Then
  const entries = (await Array.fromAsync(
    listAuditEntries(h.t.kv, s.project.id, { now: h.t.clock.now() }),
  )).filter((e) => e.action.startsWith("webhook_")).reverse();
  const url = added.endpoint.url;
  assert.deepEqual(entries.map((e) => [e.action, e.actor, e.details.endpointId, e.details.url]), [
    ["webhook_endpoint_added", s.dev.address, id, url],
    ["webhook_test_sent", s.dev.address, id, url],
    ["webhook_secret_rotated", s.dev.address, id, url],
    ["webhook_delivery_replayed", s.dev.address, id, url],
    ["webhook_endpoint_removed", s.dev.address, id, url],
  ]);
  assert.equal(entries[2]!.details.droppedPrevious, true);
  assert.deepEqual(
    [entries[3]!.details.replayOf, entries[3]!.details.deliveryId],
    [tested.deliveryId, replayed.delivery.id],
  );
  const text = JSON.stringify(entries);
  for (const secret of [added.secret, rotated.secret]) assert.ok(!text.includes(secret));
  const page =
    await (await getPage(h.t.app, `/dashboard/projects/${s.project.id}/audit`, s.dev.jar))
      .text();
  assert.ok(page.includes("Webhook secret rotated") && !page.includes(rotated.secret));
});

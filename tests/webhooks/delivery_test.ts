// Webhook delivery end to end: events recorded by the service reach a real HTTPS receiver on
// loopback through the job worker, signed, retried, refused or given up as the README says.
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { ManualClock } from "../../core/clock.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { listWebhookDeliveries } from "../../kv/webhook_deliveries.ts";
import { deleteProject } from "../../kv/projects.ts";
import { RETRY_DELAYS_MS } from "../../lib/webhooks/deliver.ts";
import { removeWebhookEndpoint } from "../../lib/webhooks/endpoints.ts";
import { verifyWebhook } from "../../sdk/ts/src/verify_webhook.ts";
import { call } from "../support/test_app.ts";
import {
  HOOK_HOST,
  startWebhooksHarness,
  type WebhooksHarness,
} from "../support/webhooks_harness.ts";

const ADDRESS = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

function linked(userId: number) {
  return { type: "wallet_linked" as const, userId, address: ADDRESS };
}

async function deliveries(h: WebhooksHarness) {
  return (await listWebhookDeliveries(h.t.kv, h.project.id, { limit: 100 })).deliveries;
}

Deno.test("An event reaches the endpoint signed, with the feed entry's payload and id", async () => {
  // Given a project with one endpoint, on a clock that is the real time (the reference library
  // checks the signed timestamp against it)
  await using h = await startWebhooksHarness({ clock: new ManualClock(Date.now()) });
  const { secret, endpoint } = await h.addEndpoint();
  // When the service records an event and the worker runs
  const [event] = await recordEvents(h.t.ctx, h.project.id, [linked(1001)]);
  await h.drain();
  // Then the receiver got one POST, whose body is the event as GET /v1/events lists it
  const [got, ...more] = h.receiver.received();
  assert.ok(got, "one webhook arrived");
  assert.equal(more.length, 0);
  assert.equal(got.method, "POST");
  assert.equal(got.path, "/hooks");
  assert.equal(got.headers["content-type"], "application/json");
  const feed = await (await call(h.t.app, "/v1/events", { apiKey: h.apiKey })).json();
  assert.deepEqual(JSON.parse(got.body), feed.events[0]);
  assert.equal(JSON.parse(got.body).id, event!.id);
  assert.equal(got.headers["webhook-id"], `${h.project.id}:${event!.id}`);
  // And it verifies with the README's snippet and with the Standard Webhooks reference library
  const verified = await verifyWebhook(secret, new Headers(got.headers), got.body);
  assert.deepEqual(verified, feed.events[0]);
  assert.deepEqual(new Webhook(secret).verify(got.body, got.headers), feed.events[0]);
  // But not with another secret, nor with a changed body
  await assert.rejects(
    verifyWebhook(`whsec_${btoa("x".repeat(32))}`, new Headers(got.headers), got.body),
    /No valid/,
  );
  await assert.rejects(
    verifyWebhook(secret, new Headers(got.headers), got.body.replace("1001", "1002")),
    /No valid/,
  );
  // And the delivery log says delivered, first time
  const [logged] = await deliveries(h);
  assert.equal(logged?.status, "delivered");
  assert.equal(logged?.attempts, 1);
  assert.equal(logged?.responseStatus, 200);
  assert.equal(logged?.endpointId, endpoint.id);
  assert.equal(logged?.eventType, "wallet_linked");
});

Deno.test("A receiver answering 5xx is retried with backoff until it recovers, under the same id", async () => {
  await using h = await startWebhooksHarness();
  const { secret } = await h.addEndpoint();
  // Given a receiver that fails twice with 503
  h.receiver.answerNext({ status: 503, body: "down for maintenance" }, 2);
  await recordEvents(h.t.ctx, h.project.id, [linked(7)]);
  // When the worker runs: one attempt, answered 503
  await h.drain();
  assert.equal(h.receiver.received().length, 1);
  let [logged] = await deliveries(h);
  assert.equal(logged?.status, "retrying");
  assert.equal(logged?.responseStatus, 503);
  assert.equal(logged?.answer, "down for maintenance");
  assert.equal(logged?.nextAttemptAt, h.t.clock.now() + RETRY_DELAYS_MS[0]);
  // Then nothing more happens before the first wait is over
  h.t.clock.advance(RETRY_DELAYS_MS[0] - 1);
  await h.drain();
  assert.equal(h.receiver.received().length, 1);
  // And the second attempt comes after 10 s, the third 1 min after that, and succeeds
  h.t.clock.advance(1);
  await h.drain();
  assert.equal(h.receiver.received().length, 2);
  [logged] = await deliveries(h);
  assert.equal(logged?.nextAttemptAt, h.t.clock.now() + RETRY_DELAYS_MS[1]);
  h.t.clock.advance(RETRY_DELAYS_MS[1]);
  await h.drain();
  const received = h.receiver.received();
  assert.deepEqual(received.map((r) => r.status), [503, 503, 200]);
  [logged] = await deliveries(h);
  assert.equal(logged?.status, "delivered");
  assert.equal(logged?.attempts, 3);
  // Every attempt carries the same message id, each signed at its own time
  assert.equal(new Set(received.map((r) => r.headers["webhook-id"])).size, 1);
  assert.equal(new Set(received.map((r) => r.headers["webhook-timestamp"])).size, 3);
  const now = Math.floor(h.t.clock.now() / 1000);
  await verifyWebhook(secret, new Headers(received[2]!.headers), received[2]!.body, now);
});

Deno.test("A 4xx answer is retried like a 5xx: a receiver mid-deploy or misconfigured gets the event once it recovers", async () => {
  await using h = await startWebhooksHarness();
  await h.addEndpoint();
  h.receiver.answerNext({ status: 404 });
  h.receiver.answerNext({ status: 401 });
  await recordEvents(h.t.ctx, h.project.id, [linked(8)]);
  await h.drain();
  const [first] = await deliveries(h);
  assert.equal(first?.status, "retrying");
  assert.equal(first?.responseStatus, 404);
  assert.equal(first?.error, "HTTP 404");
  assert.equal(first?.nextAttemptAt, h.t.clock.now() + RETRY_DELAYS_MS[0]!);
  h.t.clock.advance(RETRY_DELAYS_MS[0]);
  await h.drain();
  h.t.clock.advance(RETRY_DELAYS_MS[1]);
  await h.drain();
  assert.deepEqual(h.receiver.received().map((r) => r.status), [404, 401, 200]);
  const [logged] = await deliveries(h);
  assert.equal(logged?.status, "delivered");
});

Deno.test("429 and 408 are retried like 5xx", async () => {
  await using h = await startWebhooksHarness();
  await h.addEndpoint();
  h.receiver.answerNext({ status: 429 });
  h.receiver.answerNext({ status: 408 });
  await recordEvents(h.t.ctx, h.project.id, [linked(9)]);
  await h.drain();
  h.t.clock.advance(RETRY_DELAYS_MS[0]);
  await h.drain();
  h.t.clock.advance(RETRY_DELAYS_MS[1]);
  await h.drain();
  assert.deepEqual(h.receiver.received().map((r) => r.status), [429, 408, 200]);
});

Deno.test("A redirect is not followed: the retry goes to the endpoint's own address, the other address gets nothing", async () => {
  await using h = await startWebhooksHarness();
  const elsewhere = await h.receiverAt();
  await h.addEndpoint();
  h.receiver.answerNext({ status: 307, location: `https://${HOOK_HOST}:${elsewhere.port}/stolen` });
  await recordEvents(h.t.ctx, h.project.id, [linked(10)]);
  await h.drain();
  const [first] = await deliveries(h);
  assert.equal(first?.status, "retrying");
  assert.equal(first?.error, "HTTP 307: redirects are not followed");
  h.t.clock.advance(RETRY_DELAYS_MS[0]);
  await h.drain();
  assert.deepEqual(h.receiver.received().map((r) => r.status), [307, 200]);
  assert.equal(elsewhere.received().length, 0);
  const [logged] = await deliveries(h);
  assert.equal(logged?.status, "delivered");
});

Deno.test("A slow receiver: an answer past the attempt's time limit is a timeout, retried", async () => {
  await using h = await startWebhooksHarness({ timeoutMs: 300 });
  await h.addEndpoint();
  // Given a receiver that takes 2 s to answer the first request, then answers at once
  h.receiver.answerNext({ delayMs: 2_000 });
  await recordEvents(h.t.ctx, h.project.id, [linked(11)]);
  const started = performance.now();
  await h.drain();
  // Then the attempt gave up at its limit, not at the receiver's pace
  assert.ok(performance.now() - started < 1_500, "the attempt ended at its time limit");
  let [logged] = await deliveries(h);
  assert.equal(logged?.status, "retrying");
  assert.equal(logged?.responseStatus, null);
  assert.equal(logged?.error, "No answer within 0.3 s");
  // And the next attempt, answered in time, delivers it
  h.t.clock.advance(RETRY_DELAYS_MS[0]);
  await h.drain();
  [logged] = await deliveries(h);
  assert.equal(logged?.status, "delivered");
  assert.equal(logged?.attempts, 2);
});

Deno.test("A receiver that never recovers gets 10 attempts over about 24 hours, then the delivery fails", async () => {
  await using h = await startWebhooksHarness();
  await h.addEndpoint();
  h.receiver.answerNext({ status: 500 }, 100);
  await recordEvents(h.t.ctx, h.project.id, [linked(12)]);
  const queued = h.t.clock.now();
  await h.drain();
  for (const delay of RETRY_DELAYS_MS) {
    h.t.clock.advance(delay);
    await h.drain();
  }
  h.t.clock.advance(24 * 60 * 60 * 1000);
  await h.drain();
  const received = h.receiver.received();
  assert.equal(received.length, 10);
  const lastAt = Number(received.at(-1)!.headers["webhook-timestamp"]) * 1000;
  assert.ok(lastAt - queued > 23 * 60 * 60 * 1000 && lastAt - queued < 24 * 60 * 60 * 1000);
  const [logged] = await deliveries(h);
  assert.equal(logged?.status, "failed");
  assert.equal(logged?.attempts, 10);
  assert.equal(logged?.nextAttemptAt, null);
});

Deno.test("Every endpoint of the project gets every event; a removed one gets nothing more", async () => {
  await using h = await startWebhooksHarness();
  const second = await h.receiverAt();
  await h.addEndpoint();
  const other = await h.addEndpoint(`https://${HOOK_HOST}:${second.port}/other`);
  await recordEvents(h.t.ctx, h.project.id, [linked(1), linked(2)]);
  await h.drain();
  assert.equal(h.receiver.received().length, 2);
  assert.equal(second.received().length, 2);
  // When one endpoint is removed while an event's delivery waits for the worker
  await recordEvents(h.t.ctx, h.project.id, [linked(3)]);
  await removeWebhookEndpoint(h.t.ctx, {
    projectId: h.project.id,
    endpointId: other.endpoint.id,
    actor: "dev",
  });
  await recordEvents(h.t.ctx, h.project.id, [linked(4)]);
  await h.drain();
  // Then the queued delivery to it is dropped and later events do not go to it
  assert.equal(h.receiver.received().length, 4);
  assert.equal(second.received().length, 2);
});

Deno.test("A commit of many events goes through fan-out jobs: each endpoint gets each event once", async () => {
  await using h = await startWebhooksHarness();
  const second = await h.receiverAt();
  await h.addEndpoint();
  await h.addEndpoint(`https://${HOOK_HOST}:${second.port}/other`);
  // 60 events to 2 endpoints is past what one commit queues directly (50 deliveries)
  const events = Array.from({ length: 60 }, (_, i) => linked(i + 1));
  const recorded = await recordEvents(h.t.ctx, h.project.id, events);
  await h.drain();
  for (const receiver of [h.receiver, second]) {
    const ids = receiver.received().map((r) => JSON.parse(r.body).id).sort((a, b) => a - b);
    assert.deepEqual(ids, recorded.map((e) => e.id));
  }
});

Deno.test("Each attempt writes one JSON log line naming the project, endpoint, event and status, never the secret", async () => {
  await using h = await startWebhooksHarness();
  const { endpoint, secret } = await h.addEndpoint();
  h.receiver.answerNext({ status: 502 });
  const lines: string[] = [];
  const { log: out, error: err } = console;
  console.log = (line: string) => lines.push(line);
  console.error = (line: string) => lines.push(line);
  let eventId: string | undefined;
  try {
    eventId = (await recordEvents(h.t.ctx, h.project.id, [linked(13)]))[0]?.id;
    await h.drain();
    h.t.clock.advance(RETRY_DELAYS_MS[0]);
    await h.drain();
  } finally {
    console.log = out;
    console.error = err;
  }
  const attempts = lines.map((line) => JSON.parse(line)).filter((line) =>
    line.msg === "Webhook delivery attempt"
  );
  assert.deepEqual(
    attempts.map((
      a,
    ) => [a.projectId, a.endpointId, a.eventType, a.eventId, a.attempt, a.status, a.outcome]),
    [
      [h.project.id, endpoint.id, "wallet_linked", eventId, 1, 502, "retrying"],
      [h.project.id, endpoint.id, "wallet_linked", eventId, 2, 200, "delivered"],
    ],
  );
  assert.ok(!lines.join("\n").includes(secret.slice(6)), "no line carries the secret");
});

Deno.test("A deleted project's webhooks are not sent", async () => {
  await using h = await startWebhooksHarness();
  await h.addEndpoint();
  await recordEvents(h.t.ctx, h.project.id, [linked(14)]);
  await deleteProject(h.t.kv, h.project.id, h.t.clock.now());
  await h.drain();
  assert.equal(h.receiver.received().length, 0);
  assert.deepEqual(await deliveries(h), []);
});

// The address rules at delivery time: a name is resolved and checked before every attempt, so an
// endpoint whose name is re-pointed after it was added reaches nothing it should not. The DNS
// stand-in points names anywhere; the real resolver is checked on `localhost`.
import assert from "node:assert/strict";
import { recordEvents } from "../../lib/events/record.ts";
import { listWebhookDeliveries, type WebhookDelivery } from "../../kv/webhook_deliveries.ts";
import { RETRY_DELAYS_MS } from "../../lib/webhooks/deliver.ts";
import { resolveWithDns } from "../../lib/webhooks/runtime.ts";
import {
  HOOK_HOST,
  startWebhooksHarness,
  type WebhooksHarness,
} from "../support/webhooks_harness.ts";

const EVENT = {
  type: "wallet_linked" as const,
  userId: 3,
  address: "Vote111111111111111111111111111111111111111",
};

async function deliverOne(h: WebhooksHarness): Promise<WebhookDelivery> {
  await recordEvents(h.t.ctx, h.project.id, [EVENT]);
  await h.drain();
  const [delivery] = (await listWebhookDeliveries(h.t.kv, h.project.id, { limit: 1 })).deliveries;
  assert.ok(delivery);
  return delivery;
}

Deno.test("A name re-pointed at a forbidden address after the endpoint was added gets nothing, and is not retried", async (t) => {
  const cases: [string, string[]][] = [
    ["a private address", ["10.0.0.5"]],
    ["the cloud metadata service", ["169.254.169.254"]],
    ["carrier-grade NAT", ["100.64.0.9"]],
    ["link-local IPv6", ["fe80::1"]],
    ["IPv4-mapped private", ["::ffff:192.168.0.1"]],
    ["NAT64 of metadata", ["64:ff9b::a9fe:a9fe"]],
    ["6to4 of a private address", ["2002:0a00:0001::1"]],
    ["one bad address among good ones", ["127.0.0.1", "172.20.1.1"]],
  ];
  for (const [name, addresses] of cases) {
    await t.step(name, async () => {
      await using h = await startWebhooksHarness();
      await h.addEndpoint();
      // When the endpoint's name points somewhere else at delivery time
      h.names.set(HOOK_HOST, addresses);
      const delivery = await deliverOne(h);
      h.t.clock.advance(RETRY_DELAYS_MS[0]);
      await h.drain();
      // Then nothing was sent, the delivery failed at once, and it stays failed; its log (shown
      // to the project's members) names no address the name resolved to inside our network
      assert.equal(h.receiver.received().length, 0);
      assert.equal(delivery.status, "failed");
      assert.equal(delivery.error, `${HOOK_HOST} does not resolve to a public address`);
      assert.equal(delivery.responseStatus, null);
    });
  }
});

Deno.test("A name that stops resolving is a network failure: retried", async () => {
  await using h = await startWebhooksHarness();
  await h.addEndpoint();
  h.names.delete(HOOK_HOST);
  const delivery = await deliverOne(h);
  assert.equal(delivery.status, "retrying");
  assert.match(delivery.error ?? "", /does not resolve/);
  h.names.set(HOOK_HOST, ["127.0.0.1"]);
  h.t.clock.advance(RETRY_DELAYS_MS[0]);
  await h.drain();
  assert.equal(h.receiver.received().length, 1);
});

Deno.test("TLS is verified for the URL's name on the checked address: another name's certificate fails", async () => {
  await using h = await startWebhooksHarness();
  h.names.set("other.example.test", ["127.0.0.1"]);
  await h.addEndpoint(`https://other.example.test:${h.receiver.port}/hooks`);
  const delivery = await deliverOne(h);
  assert.equal(h.receiver.received().length, 0);
  assert.equal(delivery.status, "retrying");
  assert.match(delivery.error ?? "", /TLS handshake failed: .*not valid for name/);
});

Deno.test("Without WEBHOOKS_ALLOW_LOOPBACK, localhost through the real resolver is refused; with it, delivered", async () => {
  await using h = await startWebhooksHarness();
  h.t.ctx.webhooks.resolve = resolveWithDns;
  const plain = await h.receiverAt({});
  // Added while loopback is allowed (a sandbox), then the service runs without it
  await h.addEndpoint(`http://localhost:${plain.port}/in`);
  h.t.ctx.config.webhooksAllowLoopback = false;
  const refused = await deliverOne(h);
  assert.equal(refused.status, "failed");
  assert.equal(refused.error, "The URL must be an https:// URL");
  assert.equal(plain.received().length, 0);
  // And an https endpoint on localhost is refused by its address
  await assert.rejects(
    h.addEndpoint(`https://localhost:${h.receiver.port}/in`),
    /url: localhost does not resolve to a public address$/,
  );
  h.t.ctx.config.webhooksAllowLoopback = true;
  const delivered = await deliverOne(h);
  assert.equal(delivered.status, "delivered");
  assert.equal(plain.received().length, 1);
});

Deno.test("http:// is only for a receiver on loopback, even with loopback allowed", async () => {
  await using h = await startWebhooksHarness();
  const plain = await h.receiverAt({});
  await h.addEndpoint(`http://${HOOK_HOST}:${plain.port}/in`);
  h.names.set(HOOK_HOST, ["93.184.216.34"]);
  const delivery = await deliverOne(h);
  assert.equal(delivery.status, "failed");
  assert.equal(delivery.error, "http:// is only for a receiver on this machine: use https://");
});

// Signing secrets: a rotation's overlap (both sign, then only the new one), the old one stopped at
// once, and a SECRET rotation that re-encrypts them without changing what receivers verify with.
import assert from "node:assert/strict";
import { recordEvents } from "../../lib/events/record.ts";
import { addWebhookEndpoint, rotateWebhookSecret } from "../../lib/webhooks/endpoints.ts";
import { ROTATION_OVERLAP_MS } from "../../lib/webhooks/secrets.ts";
import { listWebhookEndpoints } from "../../kv/webhooks.ts";
import { createTestProject, startOnStore } from "../support/test_app.ts";
import {
  RECEIVER_TLS,
  startWebhooksHarness,
  useWebhookStandIns,
  type WebhooksHarness,
} from "../support/webhooks_harness.ts";
import { verifyWebhook } from "../../sdk/ts/src/verify_webhook.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { drain } from "../support/events_harness.ts";
import { startWebhookReceiver } from "../../sandbox/webhooks/receiver.ts";

const EVENT = {
  type: "wallet_linked" as const,
  userId: 1,
  address: "Vote111111111111111111111111111111111111111",
};
const SECRET_A = "first-secret-aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const SECRET_B = "second-secret-bbbbbbbbbbbbbbbbbbbbbbbbbbb";

// Records an event, delivers it and answers which of `secrets` verify it.
async function verifyingSecrets(h: WebhooksHarness, secrets: string[]): Promise<string[]> {
  await recordEvents(h.t.ctx, h.project.id, [EVENT]);
  await h.drain();
  const got = h.receiver.received().at(-1)!;
  const now = Math.floor(h.t.clock.now() / 1000);
  const verifying: string[] = [];
  for (const secret of secrets) {
    const ok = await verifyWebhook(secret, new Headers(got.headers), got.body, now).then(
      () => true,
      () => false,
    );
    if (ok) verifying.push(secret);
  }
  return verifying;
}

Deno.test("After a rotation both secrets sign for 24 hours, then only the new one", async () => {
  await using h = await startWebhooksHarness();
  const { endpoint, secret: first } = await h.addEndpoint();
  const rotate = (dropPrevious: boolean) =>
    rotateWebhookSecret(h.t.ctx, {
      projectId: h.project.id,
      endpointId: endpoint.id,
      dropPrevious,
      actor: "dev",
    });
  const { secret: second, endpoint: view } = await rotate(false);
  assert.equal(view.previousSecretUntil, h.t.clock.now() + ROTATION_OVERLAP_MS);
  assert.deepEqual(await verifyingSecrets(h, [first, second]), [first, second]);
  h.t.clock.advance(ROTATION_OVERLAP_MS - 1);
  assert.deepEqual(await verifyingSecrets(h, [first, second]), [first, second]);
  h.t.clock.advance(1);
  assert.deepEqual(await verifyingSecrets(h, [first, second]), [second]);
  assert.equal(h.receiver.received().at(-1)!.headers["webhook-signature"]!.split(" ").length, 1);
  // A rotation during an overlap keeps only the secret it replaces beside the new one
  const { secret: third } = await rotate(false);
  const { secret: fourth } = await rotate(false);
  assert.deepEqual(await verifyingSecrets(h, [second, third, fourth]), [third, fourth]);
  // And "the old one stops now" leaves only the new secret at once
  const { secret: fifth, endpoint: dropped } = await rotate(true);
  assert.equal(dropped.previousSecretUntil, null);
  assert.deepEqual(await verifyingSecrets(h, [fourth, fifth]), [fifth]);
});

Deno.test("A SECRET rotation re-encrypts the signing secrets; receivers keep verifying with the same whsec_", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using receiver = await startWebhookReceiver({ tls: RECEIVER_TLS });
  // Given a store run under SECRET_A with an endpoint mid-rotation (two sealed secrets)
  const first = await startOnStore(path, SECRET_A);
  first.ctx.config.webhooksAllowLoopback = true;
  useWebhookStandIns(first);
  const { project } = await createTestProject(first);
  const url = `https://hooks.example.test:${receiver.port}/in`;
  const { endpoint, secret: old } = await addWebhookEndpoint(first.ctx, {
    projectId: project.id,
    url,
    actor: project.createdBy,
  });
  const { secret } = await rotateWebhookSecret(first.ctx, {
    projectId: project.id,
    endpointId: endpoint.id,
    dropPrevious: false,
    actor: "dev",
  });
  const oldKeyId = first.ctx.keys.current.id;
  await first.close();
  // When one start rotates to SECRET_B, then the store runs under SECRET_B alone
  await (await startOnStore(path, SECRET_B, SECRET_A)).close();
  await using after = await startOnStore(path, SECRET_B);
  after.ctx.config.webhooksAllowLoopback = true;
  useWebhookStandIns(after);
  // Then both sealed secrets are under SECRET_B
  const [stored] = await listWebhookEndpoints(after.kv, project.id);
  for (const sealed of [stored!.secretEnc, stored!.previous!.secretEnc]) {
    assert.ok(sealed.startsWith(`v2.${after.ctx.keys.current.id}.webhook_secret.`), sealed);
    assert.ok(!sealed.includes(oldKeyId));
  }
  // And a delivery is signed with both secrets the receiver knows
  await recordEvents(after.ctx, project.id, [EVENT]);
  const worker = new JobWorker(after.ctx, { owner: "after" });
  await drain(worker);
  const [got] = receiver.received();
  assert.ok(got);
  const now = Math.floor(after.clock.now() / 1000);
  for (const known of [secret, old]) {
    await verifyWebhook(known, new Headers(got.headers), got.body, now);
  }
});

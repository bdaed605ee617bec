// The webhooks lane's fairness with the real worker loop: a developer whose endpoint hangs holds
// at most half of the lane's slots and never delays another developer's webhooks.
import assert from "node:assert/strict";
import { recordEvents } from "../../lib/events/record.ts";
import { addWebhookEndpoint } from "../../lib/webhooks/endpoints.ts";
import { until } from "../support/assertions.ts";
import { createTestProject } from "../support/test_app.ts";
import { HOOK_HOST, startWebhooksHarness } from "../support/webhooks_harness.ts";

const ADDRESS = "Vote111111111111111111111111111111111111111";

Deno.test("A developer's hanging endpoint holds at most half the webhook slots and does not delay another developer", async () => {
  await using h = await startWebhooksHarness({ timeoutMs: 10_000 });
  // Given developer A's endpoint, which holds every request without answering
  await h.addEndpoint();
  h.receiver.answerNext({ delayMs: 60_000 }, 1_000);
  // And developer B's project with an endpoint that answers at once
  const other = await h.receiverAt();
  const { project: b } = await createTestProject(h.t, {
    developer: "Dev2222222222222222222222222222222222222222",
  });
  await addWebhookEndpoint(h.t.ctx, {
    projectId: b.id,
    url: `https://${HOOK_HOST}:${other.port}/b`,
    actor: b.createdBy,
  });
  // When A's project records 30 events and the worker loop runs
  const events = Array.from({ length: 30 }, (_, i) => ({
    type: "wallet_linked" as const,
    userId: i + 1,
    address: ADDRESS,
  }));
  await recordEvents(h.t.ctx, h.project.id, events);
  h.worker.start();
  await until(() => h.receiver.received().length >= 4, 5_000, "A's deliveries to be held");
  // And then B's project records one
  await recordEvents(h.t.ctx, b.id, [{ type: "wallet_unlinked", userId: 7, address: ADDRESS }]);
  // Then B's webhook arrives while all of A's attempts are still held, and A never had more than
  // half of the lane's 8 slots
  await other.waitFor(1, 5_000);
  const held = h.receiver.received();
  assert.ok(held.every((r) => r.status === null), "A's attempts are all still waiting");
  assert.equal(held.length, 4);
});

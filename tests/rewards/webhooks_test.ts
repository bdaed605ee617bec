// Reward events through the event pipeline's webhooks: a reward held, then cancelled, reaches the
// project's endpoint as the feed lists it.
import assert from "node:assert/strict";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { savePolicy } from "../../lib/tx/request/policy.ts";
import { call } from "../support/test_app.ts";
import { startWebhooksHarness } from "../support/webhooks_harness.ts";
import { solReward } from "../support/rewards_harness.ts";

Deno.test("reward_held and reward_cancelled reach the project's webhook endpoint as the feed lists them", async () => {
  await using h = await startWebhooksHarness();
  await createProjectWallet(h.t.ctx, h.project.id);
  await savePolicy(h.t.kv, h.project.id, { maxSolPerTransfer: "1" });
  await h.addEndpoint();
  const post = (path: string, json?: unknown) =>
    call(h.t.app, path, { method: "POST", apiKey: h.apiKey, json });

  // When: a reward is granted to a player without a wallet, then cancelled
  assert.equal((await post("/v1/rewards", solReward(91, "hook", "0.25"))).status, 200);
  assert.equal((await post("/v1/rewards/hook/cancel")).status, 200);
  await h.drain();

  // Then: the endpoint got both events, each as the feed lists it
  const feed = await (await call(h.t.app, "/v1/events?types=reward_held,reward_cancelled", {
    apiKey: h.apiKey,
  })).json();
  // (Deliveries run side by side: in the feed's order by their ids.)
  const bodies = h.receiver.received().map((r) => JSON.parse(r.body))
    .sort((a, b) => Number(a.id) - Number(b.id));
  assert.deepEqual(bodies.map((b) => b.type), ["reward_held", "reward_cancelled"]);
  assert.deepEqual(bodies, feed.events);
  assert.deepEqual(
    {
      key: bodies[1].key,
      userId: bodies[1].userId,
      mint: bodies[1].mint,
      amount: bodies[1].amount,
    },
    { key: "hook", userId: 91, mint: null, amount: "0.25" },
  );
});

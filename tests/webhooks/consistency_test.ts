// Which events an endpoint gets, under real concurrency: exactly those committed after the commit
// that added it (the event commit checks the project's endpoint list), none lost to a race.
import assert from "node:assert/strict";
import { recordEvents } from "../../lib/events/record.ts";
import { listWebhookEndpoints } from "../../kv/webhooks.ts";
import { startWebhooksHarness } from "../support/webhooks_harness.ts";

Deno.test("Endpoints added while events are being recorded each get exactly the events committed after their add", async () => {
  await using h = await startWebhooksHarness();
  const { kv } = h.t;
  const projectId = h.project.id;
  // Given events recorded one per commit, as fast as the store takes them, until ten more have
  // been committed after the last endpoint's add (so every add lands between two events, whatever
  // the machine's speed)
  let recorded = 0;
  let addsDone = false;
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const recordedAtLeast = (count: number) =>
    new Promise<void>((resolve) => {
      if (recorded >= count) resolve();
      else waiters.push({ count, resolve });
    });
  const recording = (async () => {
    let afterAdds = 0;
    while (!addsDone || afterAdds++ < 10) {
      await recordEvents(h.t.ctx, projectId, [{ type: "ping", at: recorded }]);
      recorded++;
      for (const waiter of waiters.filter((w) => recorded >= w.count)) waiter.resolve();
    }
  })();
  // When five endpoints are added meanwhile, each once the recording has passed its point
  for (let i = 0; i < 5; i++) {
    await recordedAtLeast(10 + i * 15);
    await h.addEndpoint(h.hookUrl(`/hook-${i}`));
  }
  addsDone = true;
  await recording;
  await h.drain();
  // Then each endpoint got the events whose commit came after its own, judged by the store's
  // commit order (versionstamps): the event's feed entry against the endpoint's record
  const eventCommits = new Map<number, string>();
  for await (const entry of kv.list({ prefix: ["events", projectId] })) {
    eventCommits.set(entry.key[2] as number, entry.versionstamp);
  }
  const EVENTS = recorded;
  assert.equal(eventCommits.size, EVENTS);
  const received = h.receiver.received();
  for (const endpoint of await listWebhookEndpoints(kv, projectId)) {
    const added = (await kv.get(["webhook_endpoints", projectId, endpoint.id])).versionstamp!;
    const expected = [...eventCommits].filter(([, stamp]) => stamp > added).map(([id]) => id);
    const path = new URL(endpoint.url).pathname;
    const got = received.filter((r) => r.path === path).map((r) => Number(JSON.parse(r.body).id));
    assert.ok(expected.length > 0 && expected.length < EVENTS, `${path} was added meanwhile`);
    assert.deepEqual(got.sort((a, b) => a - b), expected.sort((a, b) => a - b), path);
  }
});

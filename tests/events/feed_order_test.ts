// The feed's guarantee under real concurrency: two instances on one KV file write thousands of
// events while a reader follows `next`; the reader sees every event once, in commit order.
import assert from "node:assert/strict";
import { getAddressDecoder } from "@solana/kit";
import { linkPlayerWallet, unlinkPlayerWallet } from "../../lib/link/linking.ts";
import { type EventsInstance, startEventsHarness } from "../support/events_harness.ts";
import { call } from "../support/test_app.ts";

const WRITERS_PER_INSTANCE = 4;
const ROUNDS = 70;

type Seen = { id: string; type: string; userId: number; address: string };

Deno.test("A reader following next sees every event once, in order, while two instances write at once", async () => {
  // Given two instances on one KV file (events off: the feed is all this test reads).
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using h = await startEventsHarness({ kvPath: path, eventsOn: false });
  const b = await h.instance({ owner: "b" });

  // When 8 writers (4 per instance) each run rounds of link, take-over and unlink, each round
  // writing 4 events in 3 commits, and a reader follows the feed from both instances meanwhile.
  const expected = new Map<number, string[]>();
  let stopped = false;
  const writer = async (instance: EventsInstance, writerId: number) => {
    const own: string[] = [];
    expected.set(writerId, own);
    const [first, second] = [writerId * 10 + 1, writerId * 10 + 2];
    for (let round = 0; round < ROUNDS && !stopped; round++) {
      const address = getAddressDecoder().decode(
        new Uint8Array(32).fill(writerId, 0, 16).fill(round + 1, 16),
      );
      await linkPlayerWallet(instance.ctx, h.project.id, { userId: first, address });
      own.push(`wallet_linked:${first}:${address}`);
      // The second player takes the wallet: two events in one commit.
      await linkPlayerWallet(instance.ctx, h.project.id, { userId: second, address });
      own.push(`wallet_unlinked:${first}:${address}`, `wallet_linked:${second}:${address}`);
      await unlinkPlayerWallet(instance.ctx, h.project.id, second);
      own.push(`wallet_unlinked:${second}:${address}`);
    }
  };
  let writing = true;
  const writers = Promise.all(
    Array.from({ length: 2 * WRITERS_PER_INSTANCE }, (_, i) => writer(i % 2 ? b : h.a, i + 1)),
  ).finally(() => (writing = false));

  const seen: Seen[] = [];
  let cursor = "0";
  let reads = 0;
  const total = 2 * WRITERS_PER_INSTANCE * ROUNDS * 4;
  try {
    await follow();
  } finally {
    // Stop the writers before the harness closes the store, also when the reader failed.
    stopped = true;
    await writers.catch(() => {});
  }
  await writers;

  async function follow() {
    while (writing || seen.length < total) {
      // Keep under the 600-a-minute request quota: the manual clock moves a minute per 100 reads.
      if (++reads % 100 === 0) h.a.clock.advance(60_000);
      const limit = 1 + Math.floor(Math.random() * 500);
      const app = reads % 2 ? h.a.app : b.app;
      const response = await call(app, `/v1/events?after=${cursor}&limit=${limit}`, {
        apiKey: h.apiKey,
      });
      assert.equal(response.status, 200);
      const page: { events: Seen[]; next: string } = await response.json();
      // Then each page continues exactly where the cursor was: no gap, no repeat.
      page.events.forEach((event, i) => {
        assert.equal(event.id, String(Number(cursor) + 1 + i), "consecutive ids after the cursor");
      });
      assert.equal(page.next, page.events.at(-1)?.id ?? cursor);
      seen.push(...page.events);
      cursor = page.next;
      if (page.events.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok(reads < 100_000, "the reader keeps up");
    }
  }

  // And the reader's list is exactly the events created: each writer's own events appear in the
  // order it made them, and there is nothing else.
  assert.equal(seen.length, total);
  assert.deepEqual(seen.map((e) => e.id), Array.from({ length: total }, (_, i) => String(i + 1)));
  for (const [writerId, own] of expected) {
    const mine = seen.filter((e) => Math.floor(e.userId / 10) === writerId);
    assert.deepEqual(mine.map((e) => `${e.type}:${e.userId}:${e.address}`), own);
  }
  // (The writes really interleaved: the two instances' events alternate in the feed.)
  const instanceOf = (e: Seen) => Math.floor(e.userId / 10) % 2;
  // `seen[i]` is the event just before `e`.
  const switches = seen.slice(1).filter((e, i) => instanceOf(e) !== instanceOf(seen[i] ?? e));

  assert.ok(switches.length > 10, `${switches.length} switches between instances`);
});

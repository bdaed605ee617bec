import assert from "node:assert/strict";
import { generateKeyPairSigner } from "@solana/kit";
import { claimJob, getJobEntry, type JobRecord, listJobs } from "../../kv/jobs.ts";
import { getWatchEntry, watchPollJobId } from "../../kv/watches.ts";
import { restartLostWatchPolls } from "../../lib/watches/poll.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { WATCH_POLL_INTERVAL_MS } from "../../lib/watches/poll.ts";
import {
  addWatch,
  listWatches,
  MAX_WATCHES_PER_PROJECT,
  removeWatch,
} from "../../lib/watches/watches.ts";
import { type SandboxChain, sendSolTransfer, startChain } from "../../sandbox/chain/mod.ts";
import {
  drain,
  type EventsHarness,
  type EventsInstance,
  PUBLISH_KEY,
  startEventsHarness,
  UNIVERSE,
} from "../support/events_harness.ts";
import { ApiError } from "../../core/api_error.ts";
import { call, createTestProject } from "../support/test_app.ts";
import { createTestWallet } from "../support/sign_in.ts";
import { handOverTo } from "../support/team.ts";

interface WatchEnv extends AsyncDisposable {
  chain: SandboxChain;
  h: EventsHarness;
  /** getSignaturesForAddress calls the service made. */
  historyReads(): number;
  /** Holds the next getSignaturesForAddress call until released. */
  holdHistoryRead(): { arrived: Promise<void>; release: () => void };
}

async function startWatchEnv(
  options: { kvPath?: string; eventsOn?: boolean } = {},
): Promise<WatchEnv> {
  const chain = await startChain({ autoAdvance: false });
  const rpc = startCountingProxy(chain.rpcUrl);
  const h = await startEventsHarness({
    ...options,
    // One job at a time, so messages arrive in the order the poll queued them.
    worker: { concurrency: 1 },
    config: { rpcUrls: { devnet: rpc.url, mainnet: rpc.url } },
  });
  return {
    chain,
    h,
    historyReads: () => rpc.calls.get("getSignaturesForAddress") ?? 0,
    holdHistoryRead: rpc.holdHistoryRead,
    async [Symbol.asyncDispose]() {
      await h.close();
      await rpc.close();
      await chain.close();
    },
  };
}

/** A loopback pass-through to the chain's RPC that counts calls per method and can hold the next history read. */
function startCountingProxy(target: string) {
  const calls = new Map<string, number>();
  let held: { arrived: () => void; released: Promise<void> } | null = null;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (req) => {
    const body = await req.text();
    const method = (JSON.parse(body) as { method?: string }).method ?? "?";
    calls.set(method, (calls.get(method) ?? 0) + 1);
    if (held && method === "getSignaturesForAddress") {
      const hold = held;
      held = null;
      hold.arrived();
      await hold.released;
    }
    const res = await fetch(target, { method: "POST", headers: req.headers, body });
    return new Response(await res.arrayBuffer(), { status: res.status, headers: res.headers });
  });
  /** Holds the next history read until `release()`; `arrived` resolves when it comes in. */
  const holdHistoryRead = () => {
    const arrived = Promise.withResolvers<void>();
    const released = Promise.withResolvers<void>();
    held = { arrived: arrived.resolve, released: released.promise };
    return { arrived: arrived.promise, release: released.resolve };
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    calls,
    holdHistoryRead,
    close: () => server.shutdown(),
  };
}

/** Makes `n` transactions touching `address` and confirms them; returns their signatures, oldest first. */
async function touch(chain: SandboxChain, address: string, n: number): Promise<string[]> {
  const signatures: string[] = [];
  for (let i = 0; i < n; i++) {
    signatures.push(await chain.airdrop(address as never, 1_000_000n + BigInt(i)));
  }
  chain.advanceSlots(1);
  return signatures;
}

/** Advances to the next poll and runs everything due (poll, then deliveries). */
async function nextPoll(first: EventsInstance, ...others: EventsInstance[]): Promise<void> {
  first.clock.advance(WATCH_POLL_INTERVAL_MS);
  await drain(...[first, ...others].map((i) => i.worker));
}

function inboxSignatures(h: EventsHarness): string[] {
  return h.standIn.inbox().map((m) => (m.data as { signature: string }).signature);
}

Deno.test("A watch's first poll only records where the history ends; later polls send new transactions oldest first", async () => {
  await using env = await startWatchEnv();
  const { chain, h } = env;
  const owner = await generateKeyPairSigner();
  await touch(chain, owner.address, 2);

  // When: the watch is added and polled for the first time.
  await addWatch(h.a.ctx, h.project.id, { name: "vault", address: owner.address });
  await drain(h.a.worker);

  // Then: nothing from the past is sent.
  assert.deepEqual(h.standIn.inbox(), []);

  // When: new transactions, one of them failed on-chain.
  const sent = await touch(chain, owner.address, 2);
  // More than the owner holds: without preflight it lands, and fails.
  sent.push(await sendSolTransfer(chain, { from: owner, amount: 1_000_000_000_000n }));
  chain.advanceSlots(1);
  sent.push(...await touch(chain, owner.address, 1));
  await nextPoll(h.a);

  // Then
  const data = h.standIn.inbox().map((m) => m.data as Record<string, unknown>);
  assert.deepEqual(data.map((d) => d.signature), sent);
  assert.deepEqual(data.map((d) => d.failed), [false, false, true, false]);
  const [message] = data;
  assert.ok(message);
  assert.deepEqual(Object.keys(message), [
    "v",
    "type",
    "id",
    "name",
    "address",
    "signature",
    "slot",
    "failed",
  ]);
  assert.deepEqual([message.type, message.name, message.address], [
    "watch",
    "vault",
    owner.address,
  ]);
  const slots = data.map((d) => d.slot as number);
  assert.ok(slots.every(Number.isInteger));
  assert.deepEqual(slots, slots.toSorted((a, b) => a - b));

  // And a quiet poll sends nothing more.
  await nextPoll(h.a);
  assert.equal(h.standIn.inbox().length, 4);
});

Deno.test("An address with no history still gets its very first transaction", async () => {
  await using env = await startWatchEnv();
  const { chain, h } = env;
  const fresh = (await generateKeyPairSigner()).address;
  await addWatch(h.a.ctx, h.project.id, { name: "new", address: fresh });
  await drain(h.a.worker);

  const [first] = await touch(chain, fresh, 1);
  await nextPoll(h.a);

  assert.deepEqual(inboxSignatures(h), [first]);
});

Deno.test("One poll sends at most the 1,000 newest transactions, oldest first, and records them all in the feed", async () => {
  await using env = await startWatchEnv();
  const { chain, h } = env;
  const address = (await generateKeyPairSigner()).address;
  await addWatch(h.a.ctx, h.project.id, { name: "busy", address });
  await drain(h.a.worker);

  const sent = await touch(chain, address, 1_010);
  await nextPoll(h.a);
  // Beyond the first 100 of a minute, one project's watch events are spread over the minute.
  h.a.clock.advance(60_000);
  await drain(h.a.worker);

  assert.deepEqual(inboxSignatures(h), sent.slice(10));
  await nextPoll(h.a);
  assert.equal(h.standIn.inbox().length, 1_000, "the skipped ones are not sent later");

  // The poll's one commit recorded all 1,000 in the feed, oldest first, under the ids the
  // messages carried.
  const feed: Array<{ id: string; signature: string }> = [];
  for (const after of ["0", "500"]) {
    const page = await call(h.a.app, `/v1/events?after=${after}&limit=500`, { apiKey: h.apiKey });
    feed.push(...(await page.json()).events);
  }
  assert.deepEqual(feed.map((e) => e.signature), sent.slice(10));
  const ids = new Map(feed.map((e) => [e.signature, e.id]));
  for (const message of h.standIn.inbox()) {
    const data = message.data as { id: string; signature: string };
    assert.equal(data.id, ids.get(data.signature));
  }
  assert.deepEqual(feed.map((e) => e.id), Array.from({ length: 1_000 }, (_, i) => String(i + 1)));
});

Deno.test("A failed poll starts again from the same position", async () => {
  await using env = await startWatchEnv();
  const { chain, h } = env;
  const address = (await generateKeyPairSigner()).address;
  await addWatch(h.a.ctx, h.project.id, { name: "w", address });
  await drain(h.a.worker);
  const sent = await touch(chain, address, 3);

  // When: the RPC fails during the next poll.
  chain.faults.failHttp(1, { status: 503 });
  await nextPoll(h.a);
  const [watch] = await listWatches(h.a.ctx, h.project.id);
  assert.ok(watch);
  assert.deepEqual(h.standIn.inbox(), []);

  // Then: the poll after it sends the same transactions, once each.
  sent.push(...await touch(chain, address, 1));
  await nextPoll(h.a);
  assert.deepEqual(inboxSignatures(h), sent);
  assert.notEqual((await listWatches(h.a.ctx, h.project.id))[0]?.polledAt, watch.polledAt);
});

Deno.test("With events off, polling keeps its position, so turning events on replays nothing", async () => {
  await using env = await startWatchEnv({ eventsOn: false });
  const { chain, h } = env;
  const address = (await generateKeyPairSigner()).address;
  await addWatch(h.a.ctx, h.project.id, { name: "w", address });
  await drain(h.a.worker);
  const unsent = await touch(chain, address, 3);
  await nextPoll(h.a);
  assert.deepEqual(await listJobs(h.a.kv).then((jobs) => jobs.map((j) => j.payload.type)), [
    "watch_poll",
  ]);

  // When
  await saveEventSettings(h.a.ctx, h.project.id, {
    universeId: UNIVERSE,
    publishingKey: PUBLISH_KEY,
  });
  const sent = await touch(chain, address, 2);
  await nextPoll(h.a);

  // Then
  assert.deepEqual(inboxSignatures(h), sent);
  const [watch] = await listWatches(h.a.ctx, h.project.id);
  assert.ok(watch);
  const position = (await getWatchEntry(h.a.kv, h.project.id, watch.id)).value?.position;
  assert.equal(position?.signature, sent[1]);
  assert.ok(!inboxSignatures(h).some((s) => unsent.includes(s)));
});

Deno.test("Removing a watch stops its polling for good", async () => {
  await using env = await startWatchEnv();
  const { chain, h } = env;
  const address = (await generateKeyPairSigner()).address;
  const watch = await addWatch(h.a.ctx, h.project.id, { name: "w", address });
  await drain(h.a.worker);

  assert.equal((await removeWatch(h.a.ctx, h.project.id, watch.id))?.id, watch.id);
  await touch(chain, address, 2);
  await nextPoll(h.a);
  await restartLostWatchPolls(h.a.ctx);
  await nextPoll(h.a);

  assert.deepEqual(h.standIn.inbox(), []);
  assert.deepEqual(await listJobs(h.a.kv), []);
  assert.deepEqual(await listWatches(h.a.ctx, h.project.id), []);
  assert.equal(await removeWatch(h.a.ctx, h.project.id, watch.id), null);
});

Deno.test("restartLostWatchPolls() restarts a poll loop that died, from its position", async () => {
  await using env = await startWatchEnv();
  const { chain, h } = env;
  const address = (await generateKeyPairSigner()).address;
  const watch = await addWatch(h.a.ctx, h.project.id, { name: "w", address });
  await drain(h.a.worker);
  const before = await touch(chain, address, 1);
  await nextPoll(h.a);

  // Given: the loop's job is gone (dropped after repeated crashes).
  const job = await getJobEntry(h.a.kv, watchPollJobId(h.project.id, watch.id));
  await h.a.kv.atomic().delete(job.key).delete(["jobs_due", job.value!.runAt, job.value!.id])
    .commit();
  const missed = await touch(chain, address, 2);
  await nextPoll(h.a);
  assert.equal(h.standIn.inbox().length, 1);

  // When: the cron sweep runs (twice, as two instances would).
  assert.equal(await restartLostWatchPolls(h.a.ctx), 1);
  assert.equal(await restartLostWatchPolls(h.a.ctx), 0);
  await drain(h.a.worker);

  // Then
  assert.deepEqual(inboxSignatures(h), [...before, ...missed]);
});

Deno.test("A worker restart in the middle of a poll neither loses nor duplicates watch events", async (t) => {
  await t.step(
    "the instance died after claiming the poll: another runs it after the lease",
    async () => {
      const path = await Deno.makeTempFile({ suffix: ".kv" });
      await using env = await startWatchEnv({ kvPath: path });
      const { chain, h } = env;
      const address = (await generateKeyPairSigner()).address;
      const watch = await addWatch(h.a.ctx, h.project.id, { name: "w", address });
      await drain(h.a.worker);
      const sent = await touch(chain, address, 3);
      h.a.clock.advance(WATCH_POLL_INTERVAL_MS);

      // Given: instance A claimed the poll and died.
      const entry = await getJobEntry(h.a.kv, watchPollJobId(h.project.id, watch.id));
      assert.ok(
        await claimJob(h.a.kv, entry as Deno.KvEntry<JobRecord>, {
          owner: "a",
          now: h.a.clock.now(),
          leaseMs: 30_000,
        }),
      );
      await h.a.worker.stop();
      await h.kill(h.a);

      // When: instance B starts and runs what is due.
      const b = await h.instance({ owner: "b" });
      await drain(b.worker);
      assert.deepEqual(h.standIn.inbox(), [], "nothing while A's lease holds");
      b.clock.advance(30_000);
      await drain(b.worker);

      // Then
      assert.deepEqual(inboxSignatures(h), sent);
    },
  );

  await t.step("the instance died while its poll was reading the chain", async () => {
    const path = await Deno.makeTempFile({ suffix: ".kv" });
    await using env = await startWatchEnv({ kvPath: path });
    const { chain, h } = env;
    const address = (await generateKeyPairSigner()).address;
    await addWatch(h.a.ctx, h.project.id, { name: "w", address });
    await drain(h.a.worker);
    const sent = await touch(chain, address, 3);
    h.a.clock.advance(WATCH_POLL_INTERVAL_MS);

    // Given: A's poll is waiting on the RPC when A's process goes away.
    const hold = env.holdHistoryRead();
    const passOfA = h.a.worker.runDue();
    await hold.arrived;
    const a = h.a;
    await h.kill(a);

    // When: B takes over after the lease; A's read then finishes, too late.
    const b = await h.instance({ owner: "b", clock: a.clock });
    b.clock.advance(30_000);
    await drain(b.worker);
    hold.release();
    await passOfA;
    await drain(b.worker);

    // Then
    assert.deepEqual(inboxSignatures(h), sent);
    assert.equal(env.historyReads(), 3, "A's first poll, A's lost poll, B's poll");
  });

  await t.step(
    "the instance died after the poll committed: its queued events are delivered once",
    async () => {
      const path = await Deno.makeTempFile({ suffix: ".kv" });
      await using env = await startWatchEnv({ kvPath: path });
      const { chain, h } = env;
      const address = (await generateKeyPairSigner()).address;
      await addWatch(h.a.ctx, h.project.id, { name: "w", address });
      await drain(h.a.worker);
      const sent = await touch(chain, address, 3);
      h.a.clock.advance(WATCH_POLL_INTERVAL_MS);

      // Given: one pass of A runs the poll, which queues the events; then A stops.
      assert.equal(await h.a.worker.runDue(), 1);
      assert.deepEqual(h.standIn.inbox(), []);
      await h.kill(h.a);

      // When
      const b = await h.instance({ owner: "b" });
      await drain(b.worker);

      // Then
      assert.deepEqual(inboxSignatures(h), sent);
    },
  );
});

Deno.test("Two instances on one KV file poll each watch once per interval and send each event once", async () => {
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  await using env = await startWatchEnv({ kvPath: path });
  const { chain, h } = env;
  const b = await h.instance({ owner: "b" });
  const addresses = await Promise.all(
    [1, 2, 3].map(async () => (await generateKeyPairSigner()).address),
  );
  const watches = [];
  for (const [i, address] of addresses.entries()) {
    watches.push(await addWatch(i % 2 ? b.ctx : h.a.ctx, h.project.id, { name: `w${i}`, address }));
  }
  await drain(h.a.worker, b.worker);

  // When: five rounds of new transactions, with both workers running every pass at once.
  const sent: string[] = [];
  for (let round = 0; round < 5; round++) {
    for (const address of addresses) sent.push(...await touch(chain, address, 2));
    await nextPoll(h.a, b);
  }

  // Then
  for (const watch of watches) {
    const polls = (await getWatchEntry(h.a.kv, h.project.id, watch.id)).value?.polls;
    assert.equal(polls, 6, "the first poll and one per round");
  }
  assert.equal(env.historyReads(), 3 * 6, "no watch was read twice in one round");
  assert.deepEqual(inboxSignatures(h).sort(), sent.sort());
});

Deno.test("addWatch() validates the name and address and keeps to the documented maximum", async (t) => {
  await using env = await startWatchEnv();
  const { h } = env;
  const ctx = h.a.ctx;
  const projectId = h.project.id;
  const address = async () => (await generateKeyPairSigner()).address;
  const refused = async (input: { name?: unknown; address?: unknown }, message: string) => {
    await assert.rejects(
      () => addWatch(ctx, projectId, input),
      (e) =>
        e instanceof ApiError && e.status === 400 && e.code === "invalid_settings" &&
        e.message === message,
    );
  };

  await t.step("each bad field is listed", async () => {
    await refused(
      { name: "", address: "nope" },
      "name: is required; address: must be a Solana address (base58, 32 bytes)",
    );
    await refused(
      { name: "x".repeat(33), address: await address() },
      "name: must be at most 32 characters",
    );
    await refused({ name: "ok" }, "address: is required");
  });

  await t.step("names and addresses are unique in a project", async () => {
    const taken = await address();
    await addWatch(ctx, projectId, { name: "x".repeat(32), address: taken });
    await refused(
      { name: "x".repeat(32), address: await address() },
      "name: another watch already has this name",
    );
    await refused(
      { name: "other", address: taken },
      `address: already watched as ${"x".repeat(32)}`,
    );
  });

  await t.step(`at most ${MAX_WATCHES_PER_PROJECT} per project`, async () => {
    for (let i = 1; i < MAX_WATCHES_PER_PROJECT; i++) {
      await addWatch(ctx, projectId, { name: `w${i}`, address: await address() });
    }
    await refused(
      { name: "one-too-many", address: await address() },
      "watches: at most 20 per project",
    );
    assert.equal((await listWatches(ctx, projectId)).length, MAX_WATCHES_PER_PROJECT);
  });

  await t.step("an unknown project", async () => {
    await assert.rejects(
      () => addWatch(ctx, "missing", { name: "a", address: "11111111111111111111111111111111" }),
      (e) => e instanceof ApiError && e.code === "project_not_found",
    );
  });
});

Deno.test("A project's watches queue at most 1,000 events a minute together, the newest of each poll", async () => {
  await using env = await startWatchEnv();
  const { chain, h } = env;
  const addresses = [
    (await generateKeyPairSigner()).address,
    (await generateKeyPairSigner()).address,
  ] as const;
  for (const [i, address] of addresses.entries()) {
    await addWatch(h.a.ctx, h.project.id, { name: `busy${i}`, address });
  }
  await drain(h.a.worker);

  // When: both addresses receive 600 transactions before one round of polls.
  const sent = [await touch(chain, addresses[0], 600), await touch(chain, addresses[1], 600)];
  await nextPoll(h.a);
  // Within the same minute, late enough for every paced event to be due.
  h.a.clock.advance(50_000);
  await drain(h.a.worker);

  // Then: 1,000 in all; each watch's are the newest of what it found, oldest first.
  const delivered = inboxSignatures(h);
  assert.equal(delivered.length, 1_000);
  const perWatch = sent.map((all) => ({ all, got: delivered.filter((s) => all.includes(s)) }));
  assert.deepEqual(perWatch.map(({ got }) => got.length).sort(), [400, 600]);
  for (const { all, got } of perWatch) assert.deepEqual(got, all.slice(all.length - got.length));

  // And the next minute has room again; the skipped ones are never sent.
  const later = await touch(chain, addresses[0], 3);
  h.a.clock.advance(10_000);
  await drain(h.a.worker);
  assert.deepEqual(inboxSignatures(h).slice(1_000), later);
});

/**
 * Gives each project one busy watch, has each address receive 600 transactions before one round of
 * polls, and runs the worker until every event of the minute was due; returns how many reached the
 * game.
 */
async function floodWatches(env: WatchEnv, projectIds: readonly string[]): Promise<number> {
  const { chain, h } = env;
  const addresses = await Promise.all(
    projectIds.map(async () => (await generateKeyPairSigner()).address),
  );
  for (const [i, projectId] of projectIds.entries()) {
    await addWatch(h.a.ctx, projectId, { name: "busy", address: addresses[i]! });
  }
  await drain(h.a.worker);
  for (const address of addresses) await touch(chain, address, 600);
  await nextPoll(h.a);
  h.a.clock.advance(50_000);
  await drain(h.a.worker);
  return h.standIn.inbox().length;
}

Deno.test("A developer's projects queue at most 1,000 watch events a minute together", async () => {
  await using env = await startWatchEnv();
  const { h } = env;
  // Given: the developer's second project, events on.
  const second = (await createTestProject(h.a, { developer: h.project.createdBy })).project;
  await saveEventSettings(h.a.ctx, second.id, { universeId: UNIVERSE, publishingKey: PUBLISH_KEY });

  // When: a busy watch of each finds 600 transactions in one round of polls.
  const delivered = await floodWatches(env, [h.project.id, second.id]);

  // Then: 1,000 in all, not 1,000 per project.
  assert.equal(delivered, 1_000);
});

Deno.test("A project handed over counts its watch events in its new owner's 1,000 a minute", async () => {
  await using env = await startWatchEnv();
  const { h } = env;
  // Given: the harness's project handed over to a developer who owns another project, events on.
  const heir = createTestWallet().address;
  const own = (await createTestProject(h.a, { developer: heir })).project;
  await saveEventSettings(h.a.ctx, own.id, { universeId: UNIVERSE, publishingKey: PUBLISH_KEY });
  await handOverTo(h.a.ctx, h.project, heir);

  // When: a busy watch of each finds 600 transactions in one round of polls.
  const delivered = await floodWatches(env, [h.project.id, own.id]);

  // Then: 1,000 in all: the heir's minute, not one for the heir and one for the creator.
  assert.equal(delivered, 1_000);
});

Deno.test("Another project's event is delivered before a flooding project's burst of watch events", async () => {
  await using env = await startWatchEnv();
  const { chain, h } = env;
  const other = (await createTestProject(h.a)).project;
  await saveEventSettings(h.a.ctx, other.id, { universeId: UNIVERSE, publishingKey: PUBLISH_KEY });
  const addresses = await Promise.all(
    Array.from({ length: 20 }, async () => (await generateKeyPairSigner()).address),
  );
  for (const [i, address] of addresses.entries()) {
    await addWatch(h.a.ctx, h.project.id, { name: `flood${i}`, address });
  }
  await drain(h.a.worker);

  // Given: the flooding project's 20 polls queued 1,000 events.
  for (const address of addresses) await touch(chain, address, 50);
  h.a.clock.advance(WATCH_POLL_INTERVAL_MS);
  await h.a.worker.runDue();
  assert.equal(
    (await listJobs(h.a.kv)).filter((j) => j.payload.type === "deliver_event").length,
    1_000,
  );

  // When: the other project publishes an event, then the worker runs.
  await recordEvents(h.a.ctx, other.id, [{ type: "ping", at: 7 }]);
  await drain(h.a.worker);

  // Then: it did not wait behind the burst.
  const position = h.standIn.inbox().findIndex((m) => (m.data as { type: string }).type === "ping");
  assert.ok(position >= 0 && position < 10, `delivered as message ${position + 1}`);
});

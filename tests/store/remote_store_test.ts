// The service on a remote store: Deno's own KV Connect client against the test server, and two
// instances on one store keeping every cross-instance promise (quotas, links, jobs, payments).
import assert from "node:assert/strict";
import { startRemoteStore } from "../support/remote_store.ts";
import { assertOneOwnerAfterRace } from "../support/link_race.ts";
import { call, createTestApp, createTestProject } from "../support/test_app.ts";
import { drain, startEventsHarness } from "../support/events_harness.ts";
import { okJson, startTxHarness } from "../support/tx_harness.ts";
import { openKv } from "../../kv/open_kv.ts";
import { linkWallet } from "../../kv/links.ts";
import { requestCountsKey } from "../../kv/request_counts.ts";
import { createProject, listProjectsByDeveloper } from "../../kv/projects.ts";
import { createApiKey, listApiKeys } from "../../kv/api_keys.ts";
import { recordEvents } from "../../lib/events/record.ts";

const A = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";

Deno.test("Deno's KV Connect client reads, lists and writes through the test server, within denokv's limits", async () => {
  await using store = await startRemoteStore();
  const kv = await openKv(store.url);
  try {
    await kv.set(["things", 1], { name: "one" });
    await kv.set(["things", 2], new Uint8Array([0, 1, 2]), { expireIn: 60_000 });
    await kv.atomic().sum(["total"], 5n).sum(["total"], 2n).commit();
    assert.deepEqual((await kv.get(["things", 1])).value, { name: "one" });
    assert.deepEqual(
      (await kv.getMany([["things", 2], ["total"], ["none"]])).map((e) => e.value),
      [new Uint8Array([0, 1, 2]), new Deno.KvU64(7n), null],
    );
    const listed = [];
    for await (const e of kv.list({ prefix: ["things"] }, { reverse: true })) listed.push(e.key);
    assert.deepEqual(listed, [["things", 2], ["things", 1]]);
    const entry = await kv.get(["things", 1]);
    assert.equal((await kv.atomic().check(entry).set(["things", 1], 1).commit()).ok, true);
    assert.equal((await kv.atomic().check(entry).set(["things", 1], 2).commit()).ok, false);
    // The self-hosted server takes at most 10 checks a commit
    const op = kv.atomic();
    for (let i = 0; i < 11; i++) op.check({ key: ["k", i], versionstamp: null });
    await assert.rejects(op.commit(), /Too many checks/);
    // and has no queues
    assert.throws(() => kv.enqueue("x"), /Cannot use KV queues/);
  } finally {
    kv.close();
  }
});

Deno.test("A write whose answer is lost is sent again by Deno's client: guarded by a check, it applies once", async () => {
  await using store = await startRemoteStore();
  const kv = await openKv(store.url);
  try {
    // Given a create (check that the key is absent) whose answer the network loses
    store.server.faults.unavailableAfterWrite = 1;
    const result = await kv.atomic().check({ key: ["once"], versionstamp: null })
      .set(["once"], 1).sum(["applied"], 1n).commit();
    // Then the client's resend fails the check, and the write is there exactly once
    assert.equal(result.ok, false);
    assert.equal((await kv.get(["once"])).value, 1);
    assert.deepEqual((await kv.get(["applied"])).value, new Deno.KvU64(1n));
    // And a cut answer is sent again by openKv only when applying twice is harmless
    store.server.faults.cutAfterWrite = 1;
    assert.equal((await kv.atomic().set(["plain"], 2).commit()).ok, true);
    assert.equal((await kv.get(["plain"])).value, 2);
  } finally {
    kv.close();
  }
});

Deno.test("RequestQuota stays exact with two instances on one remote store", async () => {
  await using store = await startRemoteStore();
  await using a = await createTestApp({ kvPath: store.url });
  await using b = await createTestApp({ kvPath: store.url, clock: a.clock });
  const { project, apiKey } = await createTestProject(a);
  const responses = await Promise.all(
    Array.from(
      { length: 700 },
      (_, i) => call(i % 2 ? a.app : b.app, "/v1/players/1/wallet", { apiKey }),
    ),
  );
  await Promise.all(responses.map((r) => r.body?.cancel()));
  const passed = responses.filter((r) => r.status === 200).length;
  const refused = responses.filter((r) => r.status === 429).length;
  assert.deepEqual([passed, refused], [600, 100]);
  await a.ctx.quota.close();
  await b.ctx.quota.close();
  const counts = (await a.kv.get<{ minuteCount: number }>(requestCountsKey(project.id))).value;
  assert.equal(counts?.minuteCount, 700);
});

Deno.test("linkWallet() leaves one owner when players on two instances take one wallet, on a remote store", async () => {
  await using store = await startRemoteStore();
  await using a = await createTestApp({ kvPath: store.url });
  await using b = await createTestApp({ kvPath: store.url });
  await assertOneOwnerAfterRace([a.kv, b.kv], A);
});

Deno.test("Two instances on one remote store claim and deliver each event once", async () => {
  await using store = await startRemoteStore();
  await using h = await startEventsHarness({ kvPath: store.url });
  const b = await h.instance({ owner: "b" });
  for (let i = 0; i < 20; i++) {
    await recordEvents(i % 2 ? h.a.ctx : b.ctx, h.project.id, [{ type: "ping", at: i }]);
  }
  // Both workers run their passes at the same time until nothing is due
  await drain(h.a.worker, b.worker);
  const ats = h.standIn.inbox().map((m) => (m.data as { at: number }).at).sort((x, y) => x - y);
  assert.deepEqual(ats, Array.from({ length: 20 }, (_, i) => i));
  assert.equal(h.standIn.attempts().length, 20);
});

Deno.test("100 concurrent requests with one key split across two instances on a remote store send one transaction", async () => {
  await using store = await startRemoteStore();
  await using h = await startTxHarness({ kvPath: store.url });
  const b = await h.instance();
  await h.policy({ maxSolPerTransfer: "5" });
  const to = await h.link(1);
  const body = { to: { userId: 1 }, amount: "1", idempotencyKey: "remote-twin" };
  const answers = await Promise.all(
    Array.from({ length: 100 }, (_, i) => (i % 2 ? h.a : b).post("transfer-sol", body)),
  );
  const bodies = await Promise.all(answers.map((r) => r.json()));
  assert.ok(answers.every((r) => r.status === 200), JSON.stringify(bodies.slice(0, 3)));
  assert.equal(new Set(bodies.map((x) => x.signature).filter((s) => s !== null)).size, 1);
  const list = await h.rpc.getSignaturesForAddress(h.wallet!, { commitment: "confirmed" }).send();
  assert.equal(list.length - 1, 1);
  assert.equal((await h.rpc.getBalance(to).send()).value, 1_000_000_000n);
});

Deno.test("Creates and links whose answers are lost apply once and are answered as done", async () => {
  await using store = await startRemoteStore();
  await using a = await createTestApp({ kvPath: store.url });
  const developer = "Dev1111111111111111111111111111111111111111";
  // Given the network loses the answer of each write once (Deno's client resends it)
  store.server.faults.unavailableAfterWrite = 1;
  const project = await createProject(a.kv, {
    name: "Lost",
    cluster: "devnet",
    createdBy: developer,
    now: 1,
  });
  // Then the project exists once, with the slug it was answered with
  assert.deepEqual((await listProjectsByDeveloper(a.kv, developer)).map((p) => p.slug), [
    project.slug,
  ]);
  store.server.faults.unavailableAfterWrite = 1;
  await createApiKey(a.kv, project.id, 2);
  assert.equal((await listApiKeys(a.kv, project.id, a.clock.now())).length, 1);
  // And a link that takes a wallet from its owner still reports that owner
  await linkWallet(a.kv, project.id, { userId: 1, address: A, now: 3 });
  store.server.faults.unavailableAfterWrite = 1;
  const outcome = await linkWallet(a.kv, project.id, { userId: 2, address: A, now: 4 });
  assert.equal(outcome.previousOwner, 1);
});

Deno.test("A payment whose writes lose their answers is reserved, sent and confirmed once", async (t) => {
  // Deno's client sends a write whose answer is lost again, backing off for about a second over
  // five losses: 100 ms slots, so a blockhash outlives the test (15 s; 1.5 s at 10 ms slots, where
  // the signed bytes could expire on their way for a reason that is not this test's)
  await using store = await startRemoteStore();
  await using h = await startTxHarness({ kvPath: store.url, slotMs: 100 });
  await h.policy({ maxSolPerTransfer: "5" });
  const to = await h.link(1);
  const send = async (idempotencyKey: string) =>
    await okJson(
      await h.a.post("transfer-sol", { to: { userId: 1 }, amount: "1", idempotencyKey }),
    );
  await t.step(
    "the reservation's answer is lost: the request still sends its transaction",
    async () => {
      store.server.faults.unavailableAfterWriteTo = "tx_requests";
      const body = await send("lost-reservation");
      assert.equal(store.server.faults.unavailableAfterWriteTo, null);
      assert.equal(body.status, "confirmed", JSON.stringify(body));
      assert.equal((await h.rpc.getBalance(to).send()).value, 1_000_000_000n);
    },
  );
  await t.step("the next eight writes lose their answers: sent and confirmed once", async () => {
    store.server.faults.unavailableAfterWrite = 8;
    const body = await send("lost-answers");
    assert.equal(body.status, "confirmed", JSON.stringify(body));
    assert.equal((await h.rpc.getBalance(to).send()).value, 2_000_000_000n);
    assert.equal(store.server.faults.unavailableAfterWrite, 0);
  });
});

// What a payout's answer waits for on the store Deno Deploy runs (KV Connect): the store round trips
// it makes one after another, counted at the stand-in by which of them arrived after which was
// answered (`commitsInSequence`, `roundTripsInSequence`), the only calls there (the job worker is
// not started, and a project paying now and then holds no blocks whose timers could write
// meanwhile).
import assert from "node:assert/strict";
import type { DataPathCall } from "../../sandbox/kv_connect/server.ts";
import {
  commitsInSequence,
  roundTripsInSequence,
  startRemoteStore,
} from "../support/remote_store.ts";
import { okJson, startTxHarness } from "../support/tx_harness.ts";
import { call } from "../support/test_app.ts";

/** A project that paid player 21 a moment ago (its key, wallet and link known here), over KV Connect. */
async function quietProject(options: { confirmWaitMs: number; proxy?: boolean }) {
  const store = await startRemoteStore({ latencyMs: 2 });
  const h = await startTxHarness({
    kvPath: store.url,
    timing: { confirmWaitMs: options.confirmWaitMs },
    proxy: options.proxy ?? false,
  });
  await h.policy({ maxSolPerTransfer: "5" });
  await h.link(21);
  const pay = async (key: string, userId = 21) =>
    await okJson(
      await h.a.post("transfer-sol", { to: { userId }, amount: "0.01", idempotencyKey: key }),
    );
  await pay("first");
  return {
    store,
    h,
    pay,
    async [Symbol.asyncDispose]() {
      await h[Symbol.asyncDispose]();
      await store[Symbol.asyncDispose]();
    },
  };
}

// The one-key read each commit goes out behind over KV Connect (`kv/open_kv.ts`): it carries nothing.
const isPrompt = (call: DataPathCall) => call.keys.every((key) => key.startsWith("commit_prompt"));

for (
  const [answer, confirmWaitMs, commits, roundTrips] of [
    ["submitted", 0, "its reservation (which counts its request) and the answer's mark", 3],
    // The settlement's own read (its feed counter) is made while the transaction confirms: below.
    ["confirmed", 3_000, "its reservation (which counts its request) and its settlement", 4],
  ] as const
) {
  Deno.test(`A payout of a project paying now and then, answered ${answer}, reads in one round trip and waits for two commits in sequence: ${commits}`, async () => {
    // Given: a project that paid player 21 a moment ago
    await using p = await quietProject({ confirmWaitMs });

    // When: it pays the player again
    const calls: DataPathCall[] = [];
    p.store.server.trace = calls;
    const paid = await p.pay("second");
    p.store.server.trace = null;

    // Then: its request (against the quotas) and its places in the project's limits were counted
    // by its reservation's own commit, not by rounds before it: two commits one after another
    assert.equal(paid.status, answer);
    assert.equal(
      commitsInSequence(calls),
      2,
      JSON.stringify(calls.filter((c) => c.kind === "write")),
    );
    // And everything it checks was read in one round trip, beside the checks' records (the
    // recipient's window read ahead for the wallet the player had at the first payout)
    const carrying = calls.filter((call) => !isPrompt(call));
    assert.equal(roundTripsInSequence(carrying), roundTrips, JSON.stringify(carrying));
    // And on the wire each commit waited for its prompt's answer, one round trip each
    assert.equal(roundTripsInSequence(calls), roundTrips + 2, JSON.stringify(calls));
  });
}

Deno.test("A first payout to a player reads in one round trip when this instance read the player's wallet before (as a game does on join), in two otherwise", async () => {
  // Given: a project paying now and then, and two linked players it never paid
  await using p = await quietProject({ confirmWaitMs: 0 });
  await p.h.link(22);
  await p.h.link(23);
  // And: the game read player 22's wallet, as it does when they join
  const wallet = await call(p.h.a.app, "/v1/players/22/wallet", { apiKey: p.h.apiKey });
  assert.equal(wallet.status, 200);
  // The reads of a payout, one after another
  const reads = async (userId: number) => {
    const calls: DataPathCall[] = [];
    p.store.server.trace = calls;
    assert.equal((await p.pay(`first-${userId}`, userId)).status, "submitted");
    p.store.server.trace = null;
    return calls.filter((call) => call.kind === "read" && !isPrompt(call));
  };

  // When: it pays each of them
  const read = await reads(22);
  const unread = await reads(23);

  // Then: player 22's payout read what its reservation checks beside its checks' records
  assert.equal(roundTripsInSequence(read), 1, JSON.stringify(read));
  // And: player 23's, whose wallet this instance did not know, read it once its checks found it
  assert.equal(roundTripsInSequence(unread), 2, JSON.stringify(unread));
});

Deno.test("A payout's settlement reads its feed counter while the transaction confirms, not after", async () => {
  // Given: a project that paid player 21 a moment ago, its status lookups held at the chain
  await using p = await quietProject({ confirmWaitMs: 3_000, proxy: true });
  const read = Promise.withResolvers<"read">();
  const calls: DataPathCall[] = [];
  calls.push = (...added) => {
    if (added.some((c) => c.keys.some((key) => key.startsWith("event_seqs")))) read.resolve("read");
    return Array.prototype.push.apply(calls, added);
  };
  p.store.server.trace = calls;
  p.h.proxy.hold("getSignatureStatuses");

  // When: it pays the player again
  const paying = p.pay("second");

  // Then: the settlement's read is answered while no status has come back yet
  const first = await Promise.race([read.promise, paying.then(() => "answered" as const)]);
  p.h.proxy.release({ forward: true });
  assert.equal(first, "read");
  // And once the statuses come, it is confirmed
  assert.equal((await paying).status, "confirmed");
});

// What a payout's answer waits for on the store Deno Deploy runs (KV Connect): the store commits
// it makes one after another, counted at the stand-in by which of them arrived after which was
// answered (`commitsInSequence`), the only writes there (the job worker is not started, and a
// project paying now and then holds no blocks whose timers could write meanwhile).
import assert from "node:assert/strict";
import type { DataPathCall } from "../../sandbox/kv_connect/server.ts";
import { commitsInSequence, startRemoteStore } from "../support/remote_store.ts";
import { okJson, startTxHarness } from "../support/tx_harness.ts";

for (
  const [answer, confirmWaitMs, commits] of [
    ["submitted", 0, "its quota's count, its reservation and the answer's mark"],
    ["confirmed", 3_000, "its quota's count, its reservation and its settlement"],
  ] as const
) {
  Deno.test(`A payout of a project paying now and then, answered ${answer}, waits for three commits in sequence: ${commits}`, async () => {
    // Given: a project that paid once a moment ago (its key and wallet known here), over KV Connect
    await using store = await startRemoteStore({ latencyMs: 2 });
    await using h = await startTxHarness({ kvPath: store.url, timing: { confirmWaitMs } });
    await h.policy({ maxSolPerTransfer: "5" });
    await h.link(21);
    const pay = async (key: string) =>
      await okJson(
        await h.a.post("transfer-sol", { to: { userId: 21 }, amount: "0.01", idempotencyKey: key }),
      );
    await pay("first");

    // When: it pays again
    const calls: DataPathCall[] = [];
    store.server.trace = calls;
    const paid = await pay("second");
    store.server.trace = null;

    // Then: its places in the project's limits were counted by its reservation's own commit, not a
    // round's before it: three commits one after another, not four
    assert.equal(paid.status, answer);
    assert.equal(
      commitsInSequence(calls),
      3,
      JSON.stringify(calls.filter((c) => c.kind === "write")),
    );
  });
}

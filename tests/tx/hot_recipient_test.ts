// Payouts of one project to one player at the same moment (a game paying a player's rewards as they
// come in, from one server or several): they share the player's and the wallet's hourly windows, so
// their reservations take turns on them in an instance instead of all committing at once and all
// but one losing, again and again.
import assert from "node:assert/strict";
import { countCommits } from "../support/commit_counts.ts";
import { startRemoteStore } from "../support/remote_store.ts";
import {
  balanceOf,
  okJson,
  onEachStore,
  outcomeOf,
  startTxHarness,
  tally,
} from "../support/tx_harness.ts";

const PAYOUTS = 24;
const QUEUED = 12;

onEachStore(
  "Payouts to one player at once reserve in turn: every one answered, no reservation lost",
  async (store) => {
    await using h = await startTxHarness({ store });
    await h.policy({ maxSolPerTransfer: "1" });
    await h.link(21);
    // Paid once before: this instance knows the player's wallet, and its payouts read their
    // windows ahead of their turns (`read_ahead.ts`)
    await okJson(
      await h.a.post("transfer-sol", { to: { userId: 21 }, amount: "0.001", idempotencyKey: "w" }),
    );
    const commits = countCommits(h.a.kv);
    const outcomes = await Promise.all(
      Array.from({ length: PAYOUTS }, async (_, i) =>
        await outcomeOf(
          await h.a.post("transfer-sol", {
            to: { userId: 21 },
            amount: "0.001",
            idempotencyKey: `reward-${i}`,
          }),
        )),
    );
    const counts = tally(outcomes);
    assert.equal(
      (counts.confirmed ?? 0) + (counts.submitted ?? 0),
      PAYOUTS,
      `every payout answered confirmed or submitted: ${JSON.stringify(counts)}`,
    );
    assert.equal(commits.lost(), 0, "no commit lost to another payout of this instance");
  },
);

Deno.test("Payouts to one player still waiting for their turn at their deadline are answered then, nothing kept or sent, and each key pays once later", async () => {
  // Given: a remote store whose round trips take 100 ms, and a 4 s answer deadline (3 s for
  // everything but the final commits); 100 ms slots, so a blockhash outlives the test (15 s)
  await using store = await startRemoteStore();
  await using h = await startTxHarness({
    kvPath: store.url,
    slotMs: 100,
    timing: { answerWithinMs: 4_000, confirmWaitMs: 300 },
  });
  await h.policy({ maxSolPerTransfer: "1" });
  const to = await h.link(21);
  const post = (key: string) =>
    h.a.post("transfer-sol", { to: { userId: 21 }, amount: "0.001", idempotencyKey: key });
  const before = await balanceOf(h, to);

  // When: twelve payouts to the player arrive at once, each reservation several round trips long
  store.server.faults.latencyMs = 100;
  const answers = await Promise.all(Array.from({ length: QUEUED }, async (_, i) => {
    const started = performance.now();
    const res = await post(`queued-${i}`);
    return { key: `queued-${i}`, ms: performance.now() - started, res: await res.json() };
  }));
  store.server.faults.latencyMs = 0;

  // Then: each was answered by its deadline, paid, or 500 `internal` with nothing kept or sent
  const late = answers.filter((a) => a.res.error);
  console.log(
    "DIST",
    answers.map((a) => `${a.res.status ?? a.res.error.code}@${Math.round(a.ms)}`).join(" "),
  );
  for (const a of answers) {
    assert.ok(a.ms < 4_000, `${a.key} answered after ${Math.round(a.ms)} ms`);
  }
  for (const a of late) {
    assert.equal(a.res.error.code, "internal", JSON.stringify(a));
    assert.match(a.res.error.message, /nothing was sent/);
    assert.equal((await h.a.status(a.key)).status, 404);
  }
  assert.ok(
    late.length > 0 && late.length < QUEUED,
    JSON.stringify(answers.map((a) => a.res.status ?? a.res.error.code)),
  );

  // And: sent again on a quick store, each late key pays once; the others (sent as their deadline
  // came) are followed by the background until they land
  for (const { key } of late) assert.equal((await okJson(await post(key))).status, "confirmed");
  await h.backgroundCheck();
  for (const a of answers) {
    assert.equal((await okJson(await h.a.status(a.key))).status, "confirmed");
  }
  assert.equal(await balanceOf(h, to), before + BigInt(QUEUED) * 1_000_000n);
});

// The chaos test, short: one round of every fault profile (see `tests/support/chaos.ts` and
// `chaos_profiles.ts`) on a KV file, the first four over KV Connect; `deno task chaos` runs the
// long one.
import assert from "node:assert/strict";
import { runChaos } from "../support/chaos.ts";
import { CHAOS_PROFILES } from "../support/chaos_profiles.ts";
import { onEachStore } from "../support/tx_harness.ts";

const SEED = 28;
// Over KV Connect, the first profiles: a kill mid-write, lost send answers, 503s and time-outs,
// a node hiding landed payments; on a file, every profile (the slow node's rounds are long).
const ROUNDS = { file: CHAOS_PROFILES.length, remote: 4 };

onEachStore(
  "Payouts survive SIGKILL with the RPC misbehaving: each recipient paid once if confirmed, never if failed, nothing stuck, every answer on time",
  async (store) => {
    const rounds = ROUNDS[store];
    const stats = await runChaos({ rounds, payouts: 4, seed: SEED, store });
    assert.equal(stats.rounds, rounds);
    assert.equal(stats.kills, rounds);
    assert.deepEqual(
      Object.keys(stats.profiles),
      CHAOS_PROFILES.slice(0, rounds).map((p) => p.name),
    );
    assert.equal(stats.requests, rounds * 6);
    assert.equal(stats.confirmed + stats.failed, stats.requests);
    assert.equal(stats.doublePayments, 0);
    assert.equal(stats.failedThatPaid, 0);
    assert.equal(stats.stuckAttempts, 0);
    assert.equal(stats.contradictedAnswers, 0);
    assert.equal(stats.lateAnswers, 0);
    assert.ok(stats.slowestAnswer.ms <= stats.slowestAnswer.deadlineMs, JSON.stringify(stats));
    // The faults were really there.
    assert.ok((stats.rpcFaults.lostSendAnswers ?? 0) > 0, JSON.stringify(stats.rpcFaults));
    assert.ok((stats.rpcFaults.unavailable ?? 0) > 0, JSON.stringify(stats.rpcFaults));
    // (Only the slow node delays calls.)
    const delayed = (stats.rpcFaults.delayed ?? 0) > 0;
    assert.equal(delayed, "slow node" in stats.profiles, JSON.stringify(stats.rpcFaults));
  },
);

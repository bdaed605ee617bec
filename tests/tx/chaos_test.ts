// The chaos test, short: see `tests/support/chaos.ts`; `deno task chaos` runs the long one.
import assert from "node:assert/strict";
import { runChaos } from "../support/chaos.ts";

Deno.test("Payouts survive SIGKILL of the service: each recipient paid once if confirmed, never if failed, nothing stuck", async () => {
  const stats = await runChaos({ rounds: 4, payouts: 4 });
  assert.equal(stats.rounds, 4);
  assert.equal(stats.kills, 4);
  assert.equal(stats.requests, 16);
  assert.equal(stats.confirmed + stats.failed, 16);
  assert.equal(stats.doublePayments, 0);
  assert.equal(stats.lostAcknowledgements, 0);
  assert.equal(stats.stuckAttempts, 0);
});

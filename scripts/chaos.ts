/**
 * `deno task chaos [rounds] [payouts] [seed]`: the long chaos run of the money path (default 200
 * rounds of 4 payouts, seed 1): SIGKILL in every round, with the RPC faults of each profile in
 * turn (`tests/support/chaos_profiles.ts`); prints a line per round and the totals. Exits 1 on any
 * double payment, `failed` key that moved money, stuck attempt, contradicted or late answer.
 */
import { chaosSummary, chaosViolations, runChaos } from "../tests/support/chaos.ts";

const rounds = Number(Deno.args[0] ?? 200);
const payouts = Number(Deno.args[1] ?? 4);
const seed = Number(Deno.args[2] ?? 1);
const started = performance.now();
const stats = await runChaos({
  rounds,
  payouts,
  seed,
  onRound: (s, profile) =>
    console.log(
      `round ${s.rounds}/${rounds} (${profile}): confirmed ${s.confirmed}, failed ${s.failed}, ` +
        `paid twice ${s.doublePayments}, failed that paid ${s.failedThatPaid}, ` +
        `stuck ${s.stuckAttempts}, contradicted ${s.contradictedAnswers}, late ${s.lateAnswers}`,
    ),
});
console.log(`\n${chaosSummary(stats, (performance.now() - started) / 60_000)}`);
if (chaosViolations(stats)) Deno.exit(1);

/**
 * `deno task chaos [rounds] [payouts]`: the long chaos run of the money path (default 200 rounds of
 * 4 payouts); prints a line per round and the totals. Exits 1 on any double payment, lost
 * acknowledgement or stuck attempt.
 */
import { runChaos } from "../tests/support/chaos.ts";

const rounds = Number(Deno.args[0] ?? 200);
const payouts = Number(Deno.args[1] ?? 4);
const started = performance.now();
const stats = await runChaos({
  rounds,
  payouts,
  onRound: (s) => console.log(`round ${s.rounds}/${rounds}: ${JSON.stringify(s)}`),
});
const minutes = ((performance.now() - started) / 60_000).toFixed(1);
console.log(`
Chaos run: ${minutes} min
  rounds                 ${stats.rounds}
  requests               ${stats.requests}
  kills                  ${stats.kills}
  confirmed              ${stats.confirmed}
  failed                 ${stats.failed}
  double payments        ${stats.doublePayments}
  lost acknowledgements  ${stats.lostAcknowledgements}
  stuck attempts         ${stats.stuckAttempts}
  (requests cut by a kill and resent: ${stats.cutByKill})
  failed by error        ${JSON.stringify(stats.failedBy)}`);
if (stats.doublePayments || stats.lostAcknowledgements || stats.stuckAttempts) Deno.exit(1);

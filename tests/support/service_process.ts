/**
 * The service as its own process, for tests that need real processes: composed as `main.ts` does
 * (configuration from the environment, one store, `startService`), plus `TX_TIMING` (JSON, a
 * partial `TxTiming`) so a test can shorten the transaction waits, and `SWEEP_EVERY_MS`, which runs
 * the minute cron's sweeps at that interval instead (main.ts registers the cron; this does not).
 * Prints one line `{"ready":true,"port":N}` on stdout once it serves.
 */
import { loadConfig } from "../../lib/config.ts";
import { startService } from "../../service.ts";
import { openKv } from "../../kv/open_kv.ts";
import { runSweeps } from "../../jobs/sweeps.ts";

const env = Deno.env.toObject();
const config = loadConfig(env);
const kv = await openKv(config.kvPath);
const service = await startService({ kv, config, hostname: "127.0.0.1" });
if (env.TX_TIMING) Object.assign(service.ctx.tx.timing, JSON.parse(env.TX_TIMING));
if (env.SWEEP_EVERY_MS) {
  const every = Number(env.SWEEP_EVERY_MS);
  const sweep = async () => {
    await runSweeps(service.ctx);
    setTimeout(sweep, every);
  };
  setTimeout(sweep, every);
}
console.log(JSON.stringify({ ready: true, port: service.server.addr.port }));

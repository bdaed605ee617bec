import { ConfigError, isDenoDeploy, loadConfig } from "./lib/config.ts";
import { startService } from "./service.ts";
import { openKv } from "./kv/open_kv.ts";
import { runWorkerKick, WORKER_CRON_NAME } from "./jobs/cron.ts";

// A bad configuration (including a SECRET the store was not started with) ends the process
// with its message alone.
function exitOnConfigError(e: unknown): never {
  if (!(e instanceof ConfigError)) throw e;
  console.error(e.message);
  Deno.exit(1);
}

function readConfig() {
  try {
    return loadConfig(Deno.env.toObject(), { onDeploy: isDenoDeploy() });
  } catch (e) {
    exitOnConfigError(e);
  }
}

const config = readConfig();
const service = openKv(config.kvPath).then((kv) => startService({ kv, config })).catch(
  exitOnConfigError,
);
// Registered synchronously at the top level, as Deno Deploy requires; it kicks the worker and runs sweeps.
Deno.cron(WORKER_CRON_NAME, "* * * * *", async () => {
  const { ctx, worker } = await service;
  await runWorkerKick(ctx, worker);
});
await service;

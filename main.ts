import { ConfigError, isDenoDeploy, loadConfig } from "./lib/config.ts";
import { startService } from "./lib/service.ts";
import { openKv } from "./kv/open_kv.ts";

function readConfig() {
  try {
    return loadConfig(Deno.env.toObject(), { onDeploy: isDenoDeploy() });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(e.message);
    Deno.exit(1);
  }
}

const config = readConfig();
const kv = await openKv(config.kvPath);
await startService({ kv, config });

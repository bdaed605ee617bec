import { ConfigError, isDenoDeploy, loadConfig } from "./lib/config.ts";
import { createAppContext } from "./lib/context.ts";
import { log } from "./lib/log.ts";
import { openKv } from "./kv/open_kv.ts";
import { createApp } from "./routes/mod.ts";

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
const ctx = await createAppContext({ kv, config });
const app = createApp(ctx);
Deno.serve(
  { port: config.port, onListen: () => log("info", "Listening", { url: config.baseUrl }) },
  app.fetch,
);

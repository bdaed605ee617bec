/** Starts the whole service on an open store: context, routes and the HTTP server. */
import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import { type AppContext, createAppContext } from "./context.ts";
import { log } from "./log.ts";
import { createApp } from "../routes/mod.ts";

/** A running service instance. */
export interface RunningService {
  ctx: AppContext;
  server: Deno.HttpServer<Deno.NetAddr>;
  /** Stops serving; the caller closes the store. */
  close(): Promise<void>;
}

/** Builds the context and app and serves them on `config.port`. */
export async function startService(
  input: { kv: Deno.Kv; config: Config; clock?: Clock; hostname?: string },
): Promise<RunningService> {
  const ctx = await createAppContext(input);
  const app = createApp(ctx);
  const server = Deno.serve({
    port: input.config.port,
    hostname: input.hostname,
    onListen: ({ port }) => log("info", "Listening", { url: input.config.baseUrl, port }),
  }, app.fetch);
  return {
    ctx,
    server,
    async close() {
      await server.shutdown();
    },
  };
}

/** Starts the whole service on an open store: context, routes and the HTTP server. */
import type { Clock } from "./core/clock.ts";
import type { Config } from "./lib/config.ts";
import { type AppContext, createAppContext } from "./lib/context.ts";
import { log } from "./core/log.ts";
import { checkSecret } from "./lib/crypto/key_check.ts";
import { createApp } from "./routes/mod.ts";
import { JobWorker } from "./jobs/worker.ts";
import { ensureTxSweepLoop } from "./lib/tx/follow/sweep.ts";
import { warmIslandsBundle } from "./components/islands_bundle.ts";
import { migrateStore } from "./lib/migrations/mod.ts";

/** A running service instance. */
interface RunningService {
  ctx: AppContext;
  /** This instance's job worker loop (every instance runs one). */
  worker: JobWorker;
  server: Deno.HttpServer<Deno.NetAddr>;
  /** Stops serving; the caller closes the store. */
  close(): Promise<void>;
}

/** Builds the context and app, starts this instance's job worker and serves on `config.port`. */
export async function startService(
  input: { kv: Deno.Kv; config: Config; clock?: Clock; hostname?: string },
): Promise<RunningService> {
  const ctx = await createAppContext(input);
  // What earlier versions stored in another shape is brought to the current one first, so
  // everything after this reads one shape.
  await migrateStore(ctx);
  // Before anything reads a sealed secret: refuses a SECRET the store was not started with.
  await checkSecret(ctx);
  const app = createApp(ctx);
  const worker = new JobWorker(ctx);
  // The 30 s transaction sweep runs from the start, not from the first minute cron: at once, so
  // attempts an instance left behind when it died are followed again right away.
  await ensureTxSweepLoop(ctx, { now: true });
  worker.start();
  // Built in the background so the first page view does not wait for the browser bundle.
  warmIslandsBundle();
  const server = Deno.serve({
    port: input.config.port,
    ...(input.hostname ? { hostname: input.hostname } : {}),
    onListen: ({ port }) => log("info", "Listening", { url: input.config.baseUrl, port }),
  }, app.fetch);
  return {
    ctx,
    worker,
    server,
    async close() {
      await server.shutdown();
      await worker.stop();
      await ctx.quota.close();
      await ctx.tx.allowances.close();
      await ctx.requestLog.flush();
    },
  };
}

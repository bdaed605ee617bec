/** Bench server: the real app on a fresh KV file, seeded with many projects, each with a key and a linked player. */
import { ManualClock } from "../../core/clock.ts";
import { createAppContext } from "../../lib/context.ts";
import type { RequestQuota } from "../../lib/quota/request_quota.ts";
import { loadConfig } from "../../lib/config.ts";
import { createApp } from "../../routes/mod.ts";
import { openKv } from "../../kv/open_kv.ts";
import { linkWallet } from "../../kv/links.ts";
import { createBenchProject, seedStore } from "../seed_store.ts";

const projects = Number(Deno.env.get("BENCH_PROJECTS") ?? 1000);
// BENCH_KV_PATH points several bench instances at one store (a KV Connect URL); only the one with
// BENCH_PROJECTS above 0 seeds it.
const kvPath = Deno.env.get("BENCH_KV_PATH") ?? `${await Deno.makeTempDir()}/bench.kv`;
const keys = await seed(kvPath, projects);
const kv = await openKv(kvPath);
const config = loadConfig({
  SECRET: "bench-secret-bench-secret-bench-secret!!",
  PORT: "0",
  KV_PATH: kvPath,
  DENO_KV_ACCESS_TOKEN: Deno.env.get("DENO_KV_ACCESS_TOKEN"),
});
// The clock stays in one minute so a bench run can never straddle a quota window.
const clock = Deno.env.get("BENCH_REAL_CLOCK") ? undefined : new ManualClock(Date.now());
const ctx = await createAppContext({ kv, config, ...(clock ? { clock } : {}) });
if (Deno.env.get("BENCH_UNCOUNTED")) {
  // The same app with nothing counted: what the quota itself costs is the difference to it.
  const uncounted: Pick<RequestQuota, "count" | "close"> = {
    count: () => Promise.resolve("ok"),
    close: () => Promise.resolve(),
  };
  ctx.quota = uncounted as RequestQuota;
}
const app = createApp(ctx);
Deno.serve({
  port: 0,
  hostname: "127.0.0.1",
  onListen: ({ port }) => console.log(JSON.stringify({ url: `http://127.0.0.1:${port}`, keys })),
}, app.fetch);

/** Seeds `projects` projects, each with a key and player 1 linked; returns their keys. */
function seed(path: string, count: number): Promise<string[]> {
  return seedStore(path, async (kv) => {
    const keys: string[] = [];
    // 50 at a time: over a remote store each write is a round trip.
    for (let start = 0; start < count; start += 50) {
      const batch = Array.from({ length: Math.min(50, count - start) }, async (_, j) => {
        const { project, apiKey } = await createBenchProject(kv, start + j);
        await linkWallet(kv, project.id, {
          userId: 1,
          address: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin",
          now: Date.now(),
        });
        return apiKey;
      });
      keys.push(...await Promise.all(batch));
    }
    return keys;
  });
}

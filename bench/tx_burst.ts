/**
 * Bench: a round end. 500 payouts of one project (distinct recipients, keys and players) arriving
 * within one second over two service instances on one store (a KV file, or the KV Connect test
 * server at 10 ms a round trip, as on Deno Deploy), against the sandbox cluster in its
 * own process at 400 ms slots, with the spec's timing (the route waits up to 15 s for
 * confirmation). Reports every answer's status, time to the last answer, p50/p99 per request, and
 * the store commits that lost to a concurrent change (each a retried round) on both instances.
 *
 * Run as a script with BENCH_ROLE=burst, this file is also the bench's service processes.
 */
import { generateKeyPairSigner } from "@solana/kit";
import { startServer, summarizeLatencies } from "./load.ts";
import { fund } from "./tx.ts";
import type { CallCounts } from "./call_counts.ts";
import { startRemoteStore } from "./remote.ts";

const BURST = Number(Deno.env.get("BENCH_BURST") ?? 500);
const SECRET = "bench-secret-bench-secret-bench-secret!!";

/** The burst's figures on a KV file or over KV Connect (`"remote"`), printed as a short report. */
export async function benchTxBurst(store: "file" | "remote" = "file"): Promise<string> {
  const self = new URL(import.meta.url).pathname;
  const tx = new URL("./tx.ts", import.meta.url).pathname;
  const chain = await startServer(tx, { BENCH_ROLE: "chain" });
  const rpcUrl = String(chain.info.rpcUrl);
  const dir = await Deno.makeTempDir();
  const remote = store === "remote" ? await startRemoteStore() : null;
  const kvPath = remote?.env.BENCH_KV_PATH ?? `${dir}/burst.kv`;
  try {
    if (remote) Deno.env.set("DENO_KV_ACCESS_TOKEN", remote.env.DENO_KV_ACCESS_TOKEN!);
    const seeded = await seedPayoutProject(kvPath, rpcUrl);
    const env = {
      BENCH_ROLE: "burst",
      BENCH_RPC_URL: rpcUrl,
      ...remote?.env,
      BENCH_KV_PATH: kvPath,
    };
    const servers = [await startServer(self, env), await startServer(self, env)];
    try {
      const urls = servers.map((s) => String(s.info.url));
      const before = await Promise.all(urls.map(callCounts));
      const started = performance.now();
      const latencies: number[] = [];
      const statuses: Record<string, number> = {};
      await Promise.all(Array.from({ length: BURST }, async (_, i) => {
        // Spread over one second, alternating instances.
        await new Promise((resolve) => setTimeout(resolve, (i * 1000) / BURST));
        const sent = performance.now();
        const res = await fetch(`${urls[i % 2]}/v1/tx/transfer-sol`, {
          method: "POST",
          headers: { "x-api-key": seeded.apiKey, "content-type": "application/json" },
          body: JSON.stringify({
            to: { userId: 1_000 + i },
            amount: "0.001",
            idempotencyKey: `round-end-${i}`,
          }),
        });
        const body = await res.json();
        latencies.push(performance.now() - sent);
        const status = res.status === 200 ? body.status : body.error.code;
        statuses[status] = (statuses[status] ?? 0) + 1;
      }));
      const last = performance.now() - started;
      const after = await Promise.all(urls.map(callCounts));
      const row = summarizeLatencies("burst", "deno fetch", {
        latencies,
        elapsed: last / 1000,
        errors: 0,
      });
      const sum = (pick: (c: CallCounts) => number) =>
        after.reduce((total, c, i) => total + pick(c) - pick(before[i]!), 0);
      return [
        `- ${BURST} payouts of one project over two instances on one ${
          remote ? "KV Connect store (10 ms a round trip)" : "KV file"
        }, sent within 1 s`,
        `- answers: ${JSON.stringify(statuses)}`,
        `- time to the last answer: ${(last / 1000).toFixed(2)} s; per request p50 ${
          row.p50Ms.toFixed(0)
        } ms, p99 ${row.p99Ms.toFixed(0)} ms`,
        `- store commits ${
          sum((c) => c.commits)
        }, of which lost to a concurrent change and retried: ${sum((c) => c.conflicts)}`,
      ].join("\n");
    } finally {
      for (const server of servers) await server.stop();
    }
  } finally {
    await chain.stop();
    await remote?.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

async function callCounts(url: string): Promise<CallCounts> {
  return await (await fetch(`${url}/bench/calls`)).json();
}

/** One project with a funded wallet and `players` linked players (ids from 1,000), on a store of its own. */
export async function seedPayoutProject(
  kvPath: string,
  rpcUrl: string,
  players = BURST,
): Promise<{ apiKey: string; wallet: string }> {
  const { createAppContext } = await import("../lib/context.ts");
  const { linkWallet } = await import("../kv/links.ts");
  const { savePolicy } = await import("../lib/tx/request/policy.ts");
  const { createProjectWallet } = await import("../lib/projects/wallet.ts");
  const { createBenchProject, seedStore } = await import("./seed_store.ts");
  const config = await burstConfig(rpcUrl, kvPath);
  // Seeding's info lines would land in the bench's report.
  const print = console.log;
  console.log = () => {};
  try {
    return await seed();
  } finally {
    console.log = print;
  }
  async function seed() {
    return await seedStore(kvPath, async (kv) => {
      const ctx = await createAppContext({ kv, config });
      const { project, apiKey } = await createBenchProject(kv, 0);
      const wallet = await createProjectWallet(ctx, project.id);
      await savePolicy(kv, project.id, { maxSolPerTransfer: "1" });
      for (let i = 0; i < players; i++) {
        const address = (await generateKeyPairSigner()).address;
        await linkWallet(kv, project.id, { userId: 1_000 + i, address, now: Date.now() });
      }
      await fund(rpcUrl, wallet as never);
      await ctx.quota.close();
      await ctx.tx.allowances.close();
      return { apiKey, wallet: wallet as string };
    });
  }
}

/** The configuration of the burst's seeding and service processes on the store at `kvPath`. */
async function burstConfig(rpcUrl: string, kvPath: string) {
  const { loadConfig } = await import("../lib/config.ts");
  return loadConfig({
    SECRET,
    PORT: "0",
    RPC_URL_DEVNET: rpcUrl,
    KV_PATH: kvPath,
    DENO_KV_ACCESS_TOKEN: Deno.env.get("DENO_KV_ACCESS_TOKEN"),
  }, { dataDir: "." });
}

/** One service instance on the shared store, with the spec's timing. */
async function serveBurst() {
  const { createAppContext } = await import("../lib/context.ts");
  const { createApp } = await import("../routes/mod.ts");
  const { openKv } = await import("../kv/open_kv.ts");
  const { countCalls } = await import("./call_counts.ts");
  const { JobWorker } = await import("../jobs/worker.ts");
  const rpcUrl = Deno.env.get("BENCH_RPC_URL")!;
  const kvPath = Deno.env.get("BENCH_KV_PATH")!;
  const config = await burstConfig(rpcUrl, kvPath);
  // The driver reads the first stdout line as the start line: info logs go nowhere.
  const print = console.log;
  console.log = () => {};
  const kv = await openKv(kvPath);
  const counts = countCalls(kv, rpcUrl);
  const ctx = await createAppContext({ kv, config });
  const worker = new JobWorker(ctx);
  worker.start();
  const app = createApp(ctx);
  Deno.serve(
    {
      port: 0,
      hostname: "127.0.0.1",
      onListen: ({ port }) => print(JSON.stringify({ url: `http://127.0.0.1:${port}` })),
    },
    (req) => new URL(req.url).pathname === "/bench/calls" ? Response.json(counts) : app.fetch(req),
  );
}

if (import.meta.main) {
  if (Deno.env.get("BENCH_ROLE") === "burst") await serveBurst();
  else {
    console.log(await benchTxBurst("file"));
    console.log(await benchTxBurst("remote"));
  }
}

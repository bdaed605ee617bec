/**
 * Bench: the cached `GET /v1/wallets/:address/balance` against two bare Deno.serve baselines (one
 * answering constant JSON, one making the RPC call on every request) and against the same app with
 * the read cache off. Run as a script with BENCH_ROLE set, this file is also the bench's server
 * process (service or RPC baseline).
 */
import { type Address, address, createSolanaRpc } from "@solana/kit";
import { base58 } from "@scure/base";
import { type LoadResult, roundRobin, runLoad, startServer } from "./load.ts";

const CONNECTIONS = 64;
const WALLETS = 100;
const LAMPORTS = 1_500_000_000n;

/** Runs the baselines, then the service, one after another; returns their results, baseline first. */
export async function benchCachedBalance(seconds: number): Promise<LoadResult[]> {
  const results: LoadResult[] = [];
  const runs: [string, string, Record<string, string>][] = [
    ["static baseline", new URL("./servers/baseline_static.ts", import.meta.url).pathname, {}],
    ["RPC-per-request baseline", new URL(import.meta.url).pathname, { BENCH_ROLE: "rpc" }],
    ["same app, cache off", new URL(import.meta.url).pathname, {
      BENCH_ROLE: "service",
      BENCH_CACHE_TTL_MS: "0",
    }],
    ["cached balance read", new URL(import.meta.url).pathname, { BENCH_ROLE: "service" }],
  ];
  for (const [name, script, env] of runs) {
    const server = await startServer(script, env);
    const url = String(server.info.url);
    const wallets = (server.info.wallets as string[] | undefined) ?? [walletAddress(0)];
    const keys = (server.info.keys as string[] | undefined) ?? [""];
    const wrkScript = balanceScript(keys, wallets);
    const nextWallet = roundRobin(wallets);
    const nextKey = roundRobin(keys);
    const request = () =>
      new Request(`${url}/v1/wallets/${nextWallet()}/balance`, {
        headers: { "x-api-key": nextKey() },
      });
    // The first second fills the cache (and warms the JIT); only the second run is measured.
    await runLoad(name, url, { connections: CONNECTIONS, seconds: 1, wrkScript, request });
    results.push(
      await runLoad(name, url, {
        connections: CONNECTIONS,
        seconds,
        wrkScript,
        request,
        serverPid: server.pid,
      }),
    );
    await server.stop();
  }
  return results;
}

// Round-robin over every project's key (quotas counted, never reached) and over the wallets.
function balanceScript(keys: string[], wallets: string[]): string {
  return `
local keys = {${keys.map((k) => `"${k}"`).join(",")}}
local wallets = {${wallets.map((w) => `"${w}"`).join(",")}}
local i = 0
request = function()
  i = i + 1
  local path = "/v1/wallets/" .. wallets[(i % #wallets) + 1] .. "/balance"
  return wrk.format("GET", path, { ["x-api-key"] = keys[(i % #keys) + 1] })
end
`;
}

function walletAddress(i: number): Address {
  const bytes = new Uint8Array(32).fill(7);
  new DataView(bytes.buffer).setUint32(0, i + 1);
  return address(base58.encode(bytes));
}

// The driver process imports this file too: only the server roles load LiteSVM and the app.

/** A sandbox cluster where every bench wallet holds 1.5 SOL. */
async function startFundedChain() {
  const { startChain } = await import("../sandbox/chain/mod.ts");
  const chain = await startChain({ autoAdvance: false });
  const wallets = Array.from({ length: WALLETS }, (_, i) => walletAddress(i));
  for (const wallet of wallets) {
    chain.setAccount(wallet, {
      lamports: LAMPORTS,
      owner: address("11111111111111111111111111111111"),
      data: new Uint8Array(),
    });
  }
  return { chain, wallets };
}

function announce(info: Record<string, unknown>) {
  return ({ port }: { port: number }) =>
    console.log(JSON.stringify({ url: `http://127.0.0.1:${port}`, ...info }));
}

/** Baseline server: bare Deno.serve doing one getBalance per request, no key, no cache. */
async function serveRpcBaseline() {
  const { formatUnits } = await import("../lib/chain/amounts.ts");
  const { chain, wallets } = await startFundedChain();
  const rpc = createSolanaRpc(chain.rpcUrl);
  Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: announce({ wallets }) }, async (req) => {
    // `/v1/wallets/:address/balance`
    const [, , , walletPart = ""] = new URL(req.url).pathname.split("/");
    const wallet = address(walletPart);
    const { value } = await rpc.getBalance(wallet, { commitment: "confirmed" }).send();
    const lamports = BigInt(value);
    return Response.json({
      address: wallet,
      lamports: lamports.toString(),
      sol: formatUnits(lamports, 9),
    });
  });
}

/** Service server: the real app on a fresh KV file with many projects, reading the sandbox. */
async function serveService() {
  const { createAppContext } = await import("../lib/context.ts");
  const { loadConfig } = await import("../lib/config.ts");
  const { createApp } = await import("../routes/mod.ts");
  const { openKv } = await import("../kv/open_kv.ts");
  const { createBenchProject, seedStore } = await import("./seed_store.ts");
  const { chain, wallets } = await startFundedChain();
  const dir = await Deno.makeTempDir();
  const keys = await seedStore(`${dir}/bench.kv`, async (kv) => {
    const keys: string[] = [];
    for (let i = 0; i < Number(Deno.env.get("BENCH_PROJECTS") ?? 1000); i++) {
      keys.push((await createBenchProject(kv, i)).apiKey);
    }
    return keys;
  });
  const kv = await openKv(`${dir}/bench.kv`);
  const config = loadConfig({
    SECRET: "bench-secret-bench-secret-bench-secret!!",
    PORT: "0",
    RPC_URL_DEVNET: chain.rpcUrl,
  }, { dataDir: dir });
  // The real clock: each wallet's entry expires every 10 s, as in production.
  const ctx = await createAppContext({ kv, config });
  const ttl = Deno.env.get("BENCH_CACHE_TTL_MS");
  if (ttl !== undefined) {
    const { ChainReads } = await import("../lib/chain/reads.ts");
    const { TtlCache } = await import("../core/ttl_cache.ts");
    ctx.chain = new ChainReads(
      ctx.rpc,
      { rpc: config.rpcUrls, das: config.dasUrls },
      new TtlCache(ctx.clock, { ttlMs: Number(ttl) }),
      new TtlCache(ctx.clock, { ttlMs: Number(ttl) }),
    );
  }
  const app = createApp(ctx);
  Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: announce({ keys, wallets }) }, app.fetch);
}

if (import.meta.main) {
  const role = Deno.env.get("BENCH_ROLE");
  if (role === "rpc") await serveRpcBaseline();
  else if (role === "service") await serveService();
  else throw new Error("Set BENCH_ROLE to rpc or service, or call benchCachedBalance()");
}

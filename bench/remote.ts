/**
 * Bench: the counted `GET /v1/players/:userId/wallet` on a remote store, the KV Connect test server
 * (`sandbox/kv_connect/`) in its own process adding 10 ms to every round trip, as a self-hosted
 * `denokv` across a network would. Runs the uncounted KV-read baseline over the same store, then one
 * service instance, then two instances on the store with the load split between them.
 */
import { type LoadResult, playerWalletLoad, runLoad, startServer } from "./load.ts";

const CONNECTIONS = 64;
/** The round trip every remote-store bench adds, as a store across a network would. */
export const LATENCY_MS = 10;
const TOKEN = "bench-kv-access-token";
// 100 projects: with the load split over two instances each still sees enough of a project's
// traffic for leases, and no project passes its 600 a minute in one 10 s run at this latency.
const PROJECTS = "100";

/** Runs baseline, one instance and two instances on one remote store; baseline first. */
export async function benchRemote(seconds: number): Promise<LoadResult[]> {
  const plain = { connections: CONNECTIONS, wrkScript: "request = nil" };
  const results: LoadResult[] = [];
  await withStore(async (env) => {
    const baseline = await startServer(serverPath("baseline_kv.ts"), env);
    const url = `${baseline.info.url}/v1/players/1/wallet`;
    await runLoad("warm-up", url, { ...plain, seconds: 1 });
    results.push(
      await runLoad("KV-read baseline, remote", url, {
        ...plain,
        seconds,
        serverPid: baseline.pid,
      }),
    );
    await baseline.stop();
  });
  // Each service run on a fresh store and projects, so no run inherits another's quota counts.
  for (
    const [name, extra] of [
      ["same app, nothing counted, remote", { BENCH_UNCOUNTED: "1" }],
      ["counted /v1 route, remote", {}],
    ] as const
  ) {
    await withStore(async (env) => {
      const one = await startServer(serverPath("service.ts"), {
        ...env,
        ...extra,
        BENCH_PROJECTS: PROJECTS,
      });
      const keys = one.info.keys as string[];
      await runLoad("warm-up", walletUrl(one), keyed(keys, one, CONNECTIONS, 1));
      results.push(await runLoad(name, walletUrl(one), keyed(keys, one, CONNECTIONS, seconds)));
      await one.stop();
    });
  }
  await withStore(async (env) => {
    const one = await startServer(serverPath("service.ts"), { ...env, BENCH_PROJECTS: PROJECTS });
    const two = await startServer(serverPath("service.ts"), { ...env, BENCH_PROJECTS: "0" });
    const keys = one.info.keys as string[];
    const pair = [one, two];
    await Promise.all(
      pair.map((s) => runLoad("warm-up", walletUrl(s), keyed(keys, s, CONNECTIONS / 2, 1))),
    );
    const runs = await Promise.all(
      pair.map((s) => runLoad("pair", walletUrl(s), keyed(keys, s, CONNECTIONS / 2, seconds))),
    );
    results.push(combine("two instances, one remote store", runs));
    await Promise.all(pair.map((s) => s.stop()));
  });
  return results;
}

/** Runs `run` with a fresh KV Connect test server process; `env` points a bench server at it. */
async function withStore(run: (env: Record<string, string>) => Promise<void>): Promise<void> {
  const store = await startRemoteStore();
  try {
    await run(store.env);
  } finally {
    await store.stop();
  }
}

/**
 * A fresh KV Connect test server process with `LATENCY_MS` on every round trip; `env` points a
 * bench server at it (`BENCH_KV_PATH` and the access token).
 */
export async function startRemoteStore(): Promise<
  { env: Record<string, string>; stop: () => Promise<void> }
> {
  const store = await startServer(
    new URL("../sandbox/kv_connect/main.ts", import.meta.url).pathname,
    { KV_CONNECT_TOKEN: TOKEN, KV_CONNECT_PORT: "0", KV_CONNECT_LATENCY_MS: String(LATENCY_MS) },
  );
  return {
    env: { BENCH_KV_PATH: String(store.info.url), DENO_KV_ACCESS_TOKEN: TOKEN },
    stop: store.stop,
  };
}

function serverPath(name: string): string {
  return new URL(`./servers/${name}`, import.meta.url).pathname;
}

function walletUrl(server: { info: Record<string, unknown> }): string {
  return `${server.info.url}/v1/players/1/wallet`;
}

/** Load options rotating over every project's key, so quotas are counted but never reached. */
function keyed(
  keys: string[],
  server: { info: Record<string, unknown>; pid: number },
  connections: number,
  seconds: number,
) {
  const { wrkScript, request } = playerWalletLoad(walletUrl(server), keys);
  return { connections, seconds, wrkScript, request, serverPid: server.pid };
}

/** Two runs side by side as one: requests and throughput add up, latencies are the worse of the two. */
function combine(name: string, runs: LoadResult[]): LoadResult {
  return {
    name,
    tool: [...new Set(runs.map((r) => r.tool))].join(", "),
    requests: runs.reduce((n, r) => n + r.requests, 0),
    rps: runs.reduce((n, r) => n + r.rps, 0),
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    // Both servers' CPU over both runs' requests.
    serverCpuUs: runs.reduce((n, r) => n + (r.serverCpuUs ?? NaN) * r.requests, 0) /
      runs.reduce((n, r) => n + r.requests, 0),
  };
}

if (import.meta.main) {
  const { resultTable } = await import("./load.ts");
  const results = await benchRemote(Number(Deno.env.get("BENCH_SECONDS") ?? 10));
  console.log(resultTable(results, results[0]));
}

/**
 * Bench: the counted `GET /v1/players/:userId/wallet` on a remote store, the KV Connect test server
 * (`sandbox/kv_connect/`) in its own process adding 10 ms to every round trip, as a self-hosted
 * `denokv` across a network would. Runs the uncounted KV-read baseline over the same store, then one
 * service instance, then two instances on the store with the load split between them.
 */
import { type LoadResult, runLoad, startServer } from "./load.ts";

const CONNECTIONS = 64;
const LATENCY_MS = 10;
const TOKEN = "bench-kv-access-token";
// 200 projects: each gets enough traffic for leases (about 25 requests a second) and stays under
// its 600 a minute for a 10 s run at this latency.
const PROJECTS = 200;

/** Runs baseline, one instance and two instances on one remote store; baseline first. */
export async function benchRemote(seconds: number): Promise<LoadResult[]> {
  const store = await startServer(
    new URL("../sandbox/kv_connect/main.ts", import.meta.url).pathname,
    { KV_CONNECT_TOKEN: TOKEN, KV_CONNECT_PORT: "0", KV_CONNECT_LATENCY_MS: String(LATENCY_MS) },
  );
  const env = { BENCH_KV_PATH: String(store.info.url), DENO_KV_ACCESS_TOKEN: TOKEN };
  const results: LoadResult[] = [];
  try {
    const baseline = await startServer(serverPath("baseline_kv.ts"), env);
    const baselineUrl = `${baseline.info.url}/v1/players/1/wallet`;
    const plain = { connections: CONNECTIONS, wrkScript: "request = nil" };
    await runLoad("warm-up", baselineUrl, { ...plain, seconds: 1 });
    results.push(await runLoad("KV-read baseline, remote", baselineUrl, { ...plain, seconds }));
    await baseline.stop();

    const one = await startServer(serverPath("service.ts"), {
      ...env,
      BENCH_PROJECTS: String(PROJECTS),
    });
    const keys = one.info.keys as string[];
    await runLoad("warm-up", walletUrl(one), keyed(keys, one, CONNECTIONS, 1));
    results.push(
      await runLoad(
        "counted /v1 route, remote",
        walletUrl(one),
        keyed(keys, one, CONNECTIONS, seconds),
      ),
    );
    const two = await startServer(serverPath("service.ts"), { ...env, BENCH_PROJECTS: "0" });
    await runLoad("warm-up", walletUrl(two), keyed(keys, two, CONNECTIONS, 1));
    const pair = await Promise.all(
      [one, two].map((s) =>
        runLoad("pair", walletUrl(s), keyed(keys, s, CONNECTIONS / 2, seconds))
      ),
    );
    results.push(combine("two instances, one remote store", pair));
    await one.stop();
    await two.stop();
  } finally {
    await store.stop();
  }
  return results;
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
  server: { info: Record<string, unknown> },
  connections: number,
  seconds: number,
) {
  const wrkScript = `
local keys = {${keys.map((k) => `"${k}"`).join(",")}}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/v1/players/1/wallet", { ["x-api-key"] = keys[(i % #keys) + 1] })
end
`;
  let n = 0;
  const request = () =>
    new Request(walletUrl(server), { headers: { "x-api-key": keys[n++ % keys.length] } });
  return { connections, seconds, wrkScript, request };
}

/** Two runs side by side as one: requests and throughput add up, latencies are the worse of the two. */
function combine(name: string, runs: LoadResult[]): LoadResult {
  return {
    name,
    tool: runs[0].tool,
    requests: runs.reduce((n, r) => n + r.requests, 0),
    rps: runs.reduce((n, r) => n + r.rps, 0),
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
  };
}

if (import.meta.main) {
  const { resultTable } = await import("./load.ts");
  const results = await benchRemote(Number(Deno.env.get("BENCH_SECONDS") ?? 10));
  console.log(resultTable(results, results[0]));
}

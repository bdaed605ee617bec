/** Bench: the counted `GET /v1/players/:userId/wallet` against bare Deno.serve baselines. */
import { type LoadResult, playerWalletLoad, runLoad, startServer } from "./load.ts";

const CONNECTIONS = 64;

/** Runs the baselines, the app with nothing counted and the app as deployed; returns their results. */
export async function benchPlayerWallet(seconds: number): Promise<LoadResult[]> {
  const results: LoadResult[] = [];
  for (
    const [name, script, env] of [
      ["static baseline", "baseline_static.ts", {}],
      ["KV-read baseline", "baseline_kv.ts", {}],
    ] as const
  ) {
    const server = await startServer(new URL(`./servers/${script}`, import.meta.url).pathname, env);
    const url = `${server.info.url}/v1/players/1/wallet`;
    await runLoad(name, url, { connections: CONNECTIONS, seconds: 1, wrkScript: "request = nil" });
    results.push(
      await runLoad(name, url, {
        connections: CONNECTIONS,
        seconds,
        wrkScript: "request = nil",
        serverPid: server.pid,
      }),
    );
    await server.stop();
  }
  for (
    const [name, env] of [["same app, nothing counted", { BENCH_UNCOUNTED: "1" }], [
      "counted /v1 route",
      {},
    ]] as const
  ) {
    const service = await startServer(
      new URL("./servers/service.ts", import.meta.url).pathname,
      env,
    );
    const keys = service.info.keys as string[];
    const url = `${service.info.url}/v1/players/1/wallet`;
    const { wrkScript, request } = playerWalletLoad(url, keys);
    await runLoad("warm-up", url, { connections: CONNECTIONS, seconds: 1, wrkScript, request });
    results.push(
      await runLoad(name, url, {
        connections: CONNECTIONS,
        seconds,
        wrkScript,
        request,
        serverPid: service.pid,
      }),
    );
    await service.stop();
  }
  return results;
}

/**
 * The KV Connect test server as a process, for benches and manual runs:
 * `KV_CONNECT_TOKEN=... deno run -A --unstable-kv sandbox/kv_connect/main.ts`. Prints one JSON line
 * with its URL. `KV_CONNECT_PORT` (default 4512, 0 for any), `KV_CONNECT_PATH` (the local KV behind
 * it, default in memory), `KV_CONNECT_LATENCY_MS` (added to every round trip, default 0).
 */
import { startKvConnectServer } from "./server.ts";

const env = Deno.env.toObject();
if (!env.KV_CONNECT_TOKEN) {
  console.error("KV_CONNECT_TOKEN: required (the access token clients must send)");
  Deno.exit(1);
}
const kv = await Deno.openKv(env.KV_CONNECT_PATH ?? ":memory:");
const server = startKvConnectServer(kv, {
  accessToken: env.KV_CONNECT_TOKEN,
  port: Number(env.KV_CONNECT_PORT ?? 4512),
});
server.faults.latencyMs = Number(env.KV_CONNECT_LATENCY_MS ?? 0);
console.log(JSON.stringify({ url: server.url }));

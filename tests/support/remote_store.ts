/** A remote store for tests: the KV Connect test server on a fresh in-memory KV, reached as a deployment would. */
import {
  type DataPathCall,
  type KvConnectServer,
  startKvConnectServer,
} from "../../sandbox/kv_connect/server.ts";

/** The access token every test server takes; Deno's client reads it from the environment. */
export const TEST_KV_ACCESS_TOKEN = "test-kv-access-token";

/** A running remote store; `url` is what `KV_PATH` would hold. */
export interface RemoteStore extends AsyncDisposable {
  url: string;
  server: KvConnectServer;
}

/**
 * Starts a KV Connect test server on a fresh in-memory KV and lets this process's client (and the
 * processes it starts) reach it; `latencyMs` is added to every round trip.
 */
export async function startRemoteStore(options: { latencyMs?: number } = {}): Promise<RemoteStore> {
  Deno.env.set("DENO_KV_ACCESS_TOKEN", TEST_KV_ACCESS_TOKEN);
  const local = await Deno.openKv(":memory:");
  const server = startKvConnectServer(local, { accessToken: TEST_KV_ACCESS_TOKEN });
  server.faults.latencyMs = options.latencyMs ?? 0;
  return {
    url: server.url,
    server,
    async [Symbol.asyncDispose]() {
      await server.close();
      local.close();
    },
  };
}

/** Holds the next write to a key containing `text` at `store`: `held` resolves once it waits. */
export function holdNextWrite(
  store: RemoteStore,
  text: string,
): { held: Promise<void>; release(): void } {
  let release!: () => void;
  const { promise: held, resolve } = Promise.withResolvers<void>();
  store.server.faults.holdingWriteTo = {
    text,
    held: resolve,
    release: new Promise<void>((done) => release = done),
  };
  return { held, release };
}

/**
 * A store several instances (or processes) can open: a temporary KV file, or the KV Connect
 * stand-in, reached over the wire as on Deno Deploy with `REMOTE_LATENCY_MS` on every round trip.
 */
export type TestStore = "file" | "remote";

/** The stand-in's latency for a `"remote"` test store: every round trip waits, as over a network. */
const REMOTE_LATENCY_MS = 2;

/** A test store's path (`KV_PATH`); disposing it removes the file or stops the stand-in. */
export interface OpenedTestStore extends AsyncDisposable {
  path: string;
}

/** Creates a fresh test store of the given kind. */
export async function openTestStore(kind: TestStore): Promise<OpenedTestStore> {
  if (kind === "remote") {
    const remote = await startRemoteStore({ latencyMs: REMOTE_LATENCY_MS });
    return { path: remote.url, [Symbol.asyncDispose]: () => remote[Symbol.asyncDispose]() };
  }
  const path = await Deno.makeTempFile({ suffix: ".kv" });
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path).catch(() => {}) };
}

/**
 * The most commits of `calls` (a stand-in's trace) made one after another: the longest chain of
 * writes each arriving after the one before it was answered. The request log's writes are left
 * out: each carries calls already answered, never a call's own path (`lib/quota/request_log.ts`).
 */
export function commitsInSequence(calls: readonly DataPathCall[]): number {
  return longestChain(calls.filter((c) => c.kind === "write"));
}

/** The most round trips of `calls` made one after another, reads and commits (as above). */
export function roundTripsInSequence(calls: readonly DataPathCall[]): number {
  return longestChain(calls);
}

function longestChain(calls: readonly DataPathCall[]): number {
  const ordered = calls
    .filter((c) => !(c.kind === "write" && c.keys.every((key) => key.startsWith("request_log"))))
    .sort((a, b) => a.arrived - b.arrived);
  const chain: number[] = [];
  for (const [i, call] of ordered.entries()) {
    const before = ordered.slice(0, i).map((c, j) => c.answered < call.arrived ? chain[j]! : 0);
    chain.push(1 + Math.max(0, ...before));
  }
  return Math.max(0, ...chain);
}

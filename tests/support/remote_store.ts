/** A remote store for tests: the KV Connect test server on a fresh in-memory KV, reached as a deployment would. */
import { type KvConnectServer, startKvConnectServer } from "../../sandbox/kv_connect/server.ts";

/** The access token every test server takes; Deno's client reads it from the environment. */
export const TEST_KV_ACCESS_TOKEN = "test-kv-access-token";

/** A running remote store; `url` is what `KV_PATH` would hold. */
export interface RemoteStore extends AsyncDisposable {
  url: string;
  server: KvConnectServer;
}

/** Starts a KV Connect test server on a fresh in-memory KV and lets this process's client reach it. */
export async function startRemoteStore(): Promise<RemoteStore> {
  Deno.env.set("DENO_KV_ACCESS_TOKEN", TEST_KV_ACCESS_TOKEN);
  const local = await Deno.openKv(":memory:");
  const server = startKvConnectServer(local, { accessToken: TEST_KV_ACCESS_TOKEN });
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

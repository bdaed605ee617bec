/** Shared setup of the chain read tests: the real app wired to a sandbox cluster. */
import type { Config } from "../../lib/config.ts";
import type { ManualClock } from "../../core/clock.ts";
import { type SandboxChain, startChain } from "../../sandbox/chain/mod.ts";
import { call, createTestApp, createTestProject, type TestApp } from "./test_app.ts";

/** A sandbox cluster, the app reading it, and one project key. */
export interface ChainReadsHarness extends AsyncDisposable {
  chain: SandboxChain;
  app: TestApp;
  clock: ManualClock;
  apiKey: string;
  /** GET on the app with the project's key. */
  get(path: string): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Starts a sandbox cluster with manual slots and an app whose clusters both read it; `das: true`
 * also points DAS_URL_* at the sandbox's DAS endpoint. `urls` overrides where the app connects
 * (for a counting proxy in front of the cluster).
 */
export async function startChainReads(
  options: {
    das?: boolean;
    cluster?: "devnet" | "mainnet";
    urls?: (chain: SandboxChain) => { rpcUrl: string; dasUrl: string };
  } = {},
): Promise<ChainReadsHarness> {
  const chain = await startChain({ autoAdvance: false });
  const { rpcUrl, dasUrl } = options.urls?.(chain) ?? chain;
  const config: Partial<Config> = {
    rpcUrls: { devnet: rpcUrl, mainnet: rpcUrl },
    dasUrls: options.das
      ? { devnet: dasUrl, mainnet: dasUrl }
      : { devnet: undefined, mainnet: undefined },
  };
  const app = await createTestApp({ config });
  const { apiKey } = await createTestProject(app, { cluster: options.cluster ?? "devnet" });
  const close = async () => {
    await app.close();
    await chain.close();
  };
  return {
    chain,
    app,
    clock: app.clock,
    apiKey,
    get: (path) => call(app.app, path, { apiKey }),
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** A chain reads harness whose app reaches the sandbox through a counting proxy. */
export async function startCounted(): Promise<
  AsyncDisposable & { h: ChainReadsHarness; counter: RpcCounter }
> {
  let counter!: RpcCounter;
  const h = await startChainReads({
    urls: (chain) => {
      counter = startRpcCounter(chain.rpcUrl);
      return { rpcUrl: counter.url, dasUrl: `${counter.url}/das` };
    },
  });
  const close = async () => {
    await h.close();
    await counter.close();
  };
  return { h, counter, [Symbol.asyncDispose]: close };
}

/** A loopback JSON-RPC proxy that counts the methods it forwards, over the real protocol. */
export interface RpcCounter extends AsyncDisposable {
  url: string;
  /** Calls forwarded so far, per method (batch items counted one by one). */
  counts(): Record<string, number>;
  /** Total calls forwarded so far. */
  total(): number;
  /** Holds the next request until `release()`; `arrived` resolves when it reaches the proxy. */
  holdNext(): { arrived: Promise<void>; release(): void };
  close(): Promise<void>;
}

/** Starts a counting proxy in front of `target` on a free port; paths are forwarded as they are. */
function startRpcCounter(target: string): RpcCounter {
  const counts: Record<string, number> = {};
  let held: { arrived: () => void; gate: Promise<void> } | null = null;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.text();
    const hold = held;
    held = null;
    try {
      const parsed = JSON.parse(body);
      for (const item of Array.isArray(parsed) ? parsed : [parsed]) {
        counts[item.method] = (counts[item.method] ?? 0) + 1;
      }
    } catch {
      counts["(unparsable)"] = (counts["(unparsable)"] ?? 0) + 1;
    }
    if (hold) {
      hold.arrived();
      await hold.gate;
    }
    const url = new URL(req.url);
    const upstream = await fetch(`${target}${url.pathname}`, {
      method: req.method,
      headers: { "content-type": req.headers.get("content-type") ?? "application/json" },
      body,
    });
    return new Response(await upstream.arrayBuffer(), {
      status: upstream.status,
      headers: { "content-type": upstream.headers.get("content-type") ?? "application/json" },
    });
  });
  const close = () => server.shutdown();
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    counts: () => ({ ...counts }),
    total: () => Object.values(counts).reduce((a, b) => a + b, 0),
    holdNext() {
      const arrived = Promise.withResolvers<void>();
      const gate = Promise.withResolvers<void>();
      held = { arrived: arrived.resolve, gate: gate.promise };
      return { arrived: arrived.promise, release: gate.resolve };
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

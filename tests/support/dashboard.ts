/** Dashboard test helpers: a signed-in developer's browser, form posts and JSON posts. */
import type { Hono } from "hono";
import type { Address } from "@solana/kit";
import type { Config } from "../../lib/config.ts";
import { browse, CookieJar, createTestWallet, type TestWallet } from "./sign_in.ts";
import { createTestApp, type TestApp } from "./test_app.ts";
import { testTiming } from "./tx_harness.ts";
import { JobWorker } from "../../jobs/worker.ts";
import { type SandboxChain, startChain } from "../../sandbox/chain/mod.ts";
import { type MessagingStandIn, startMessagingStandIn } from "../../sandbox/roblox/mod.ts";

/** A developer with a wallet and a browser holding their dashboard session. */
export interface TestDeveloper {
  wallet: TestWallet;
  jar: CookieJar;
  address: string;
}

/** Signs a developer in through `/auth/wallet/challenge` and `/auth/wallet/verify`. */
export async function signInDeveloper(
  app: Hono,
  wallet: TestWallet = createTestWallet(),
): Promise<TestDeveloper> {
  const jar = new CookieJar();
  const verify = await postWalletSignIn(app, wallet, jar);
  if (verify.status !== 200) throw new Error(`Verify failed: ${await verify.text()}`);
  await verify.body?.cancel();
  return { wallet, jar, address: wallet.address };
}

/**
 * Asks for a challenge (which must be answered) and posts its signature; returns the verify
 * answer whatever its status, for tests of a refused sign-in.
 */
export async function postWalletSignIn(
  app: Hono,
  wallet: TestWallet,
  jar: CookieJar = new CookieJar(),
): Promise<Response> {
  const challenge = await browse(app, "/auth/wallet/challenge", {
    jar,
    json: { address: wallet.address },
  });
  if (challenge.status !== 200) throw new Error(`Challenge failed: ${await challenge.text()}`);
  const { message } = await challenge.json();
  return await browse(app, "/auth/wallet/verify", {
    jar,
    json: { signature: wallet.sign(message) },
  });
}

/** Posts a URL-encoded form as a browser would (Accept: text/html, our Origin unless overridden). */
export function postForm(
  app: Hono,
  path: string,
  fields: Record<string, string | string[]> = {},
  init: { jar?: CookieJar | undefined; origin?: string | null | undefined } = {},
): Promise<Response> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) body.append(name, v);
  }
  return browse(app, path, {
    method: "POST",
    jar: init.jar,
    origin: init.origin,
    body: body.toString(),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      accept: "text/html,application/xhtml+xml",
    },
  });
}

/** Posts JSON asking for JSON, as a script would; `json` undefined sends no body. */
export function postJson(
  app: Hono,
  path: string,
  json?: unknown,
  init: { jar?: CookieJar | undefined; origin?: string | null | undefined } = {},
): Promise<Response> {
  return browse(app, path, {
    method: "POST",
    jar: init.jar,
    origin: init.origin,
    json,
    headers: { accept: "application/json" },
  });
}

/** GETs a page as a browser with `jar`. */
export function getPage(app: Hono, path: string, jar?: CookieJar): Promise<Response> {
  return browse(app, path, { jar, headers: { accept: "text/html" } });
}

/** Creates a project over the JSON action; returns its id, slug and cluster. */
export async function createProjectAs(
  app: Hono,
  dev: TestDeveloper,
  input: { name?: string; cluster?: "devnet" | "mainnet" } = {},
): Promise<{ id: string; slug: string; cluster: string; name: string }> {
  const res = await postJson(app, "/dashboard/projects", {
    name: input.name ?? `Game ${crypto.randomUUID().slice(0, 6)}`,
    cluster: input.cluster ?? "devnet",
  }, { jar: dev.jar });
  if (res.status !== 201) throw new Error(`Create project failed: ${await res.text()}`);
  return await res.json();
}

/** Creates an API key over the JSON action; returns its id and plaintext. */
export async function createKeyAs(
  app: Hono,
  dev: TestDeveloper,
  projectId: string,
): Promise<{ id: string; key: string }> {
  const res = await postJson(app, `/dashboard/projects/${projectId}/keys`, undefined, {
    jar: dev.jar,
  });
  if (res.status !== 201) throw new Error(`Create key failed: ${await res.text()}`);
  return await res.json();
}

/** The real app on a real loopback port, called `http://localhost:<port>`, with config overrides. */
export interface ServedDashboard extends AsyncDisposable {
  baseUrl: string;
  t: TestApp;
  close(): Promise<void>;
}

/** Serves the app on 127.0.0.1 (port 0) with `config` (chain, stand-ins) for browser tests. */
export async function serveDashboard(config: Partial<Config> = {}): Promise<ServedDashboard> {
  let handler: (req: Request) => Response | Promise<Response> = () =>
    new Response("Starting", { status: 503 });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => handler(req),
  );
  const baseUrl = `http://localhost:${server.addr.port}`;
  const t = await createTestApp({ config: { ...config, baseUrl } });
  handler = (req) => t.app.fetch(req);
  const close = async () => {
    await server.shutdown();
    await t.close();
  };
  return { baseUrl, t, close, [Symbol.asyncDispose]: close };
}

/** The app reading a sandbox cluster and publishing to the messaging stand-in, with its worker. */
export interface ChainDashboard extends AsyncDisposable {
  chain: SandboxChain;
  standIn: MessagingStandIn;
  app: TestApp;
  /** Not started: tests drain it. */
  worker: JobWorker;
}

/** Starts the cluster, a stand-in accepting `publishKey` for `universeId`, and the app on them. */
export async function startChainDashboard(
  options: { publishKey: string; universeId: string; owner: string },
): Promise<ChainDashboard> {
  const chain = await startChain({ slotMs: 10 });
  const standIn = await startMessagingStandIn({
    keys: [{ apiKey: options.publishKey, universeId: options.universeId }],
  });
  const app = await createTestApp({
    config: { rpcUrls: { devnet: chain.rpcUrl, mainnet: chain.rpcUrl }, publishUrl: standIn.url },
  });
  app.ctx.tx.timing = testTiming();
  app.ctx.events.attemptTimeoutMs = 1_000;
  const worker = new JobWorker(app.ctx, { owner: options.owner });
  return {
    chain,
    standIn,
    app,
    worker,
    async [Symbol.asyncDispose]() {
      await worker.stop();
      await app.close();
      await standIn.close();
      await chain.close();
    },
  };
}

/** A signed-in developer's new project with a managed wallet (0 SOL) on a sandbox cluster. */
export interface WalletProject extends AsyncDisposable {
  chain: SandboxChain;
  t: TestApp;
  dev: TestDeveloper;
  projectId: string;
  wallet: Address;
}

/** Starts the cluster and the app on it; the developer creates a project and its wallet by JSON. */
export async function startWalletProject(config: Partial<Config> = {}): Promise<WalletProject> {
  const chain = await startChain({ slotMs: 10 });
  const t = await createTestApp({
    config: { rpcUrls: { devnet: chain.rpcUrl, mainnet: chain.rpcUrl }, ...config },
  });
  const dev = await signInDeveloper(t.app);
  const project = await createProjectAs(t.app, dev);
  const created = await postJson(t.app, `/dashboard/projects/${project.id}/wallet`, undefined, {
    jar: dev.jar,
  });
  if (created.status !== 201) throw new Error(`Create wallet failed: ${await created.text()}`);
  const { walletAddress } = await created.json();
  return {
    chain,
    t,
    dev,
    projectId: project.id,
    wallet: walletAddress,
    async [Symbol.asyncDispose]() {
      await t.close();
      await chain.close();
    },
  };
}

/**
 * Headless Chromium for end-to-end tests, driven by playwright-core, plus the real app served on a
 * real loopback port with the Roblox OAuth stand-in, and a Wallet Standard test wallet.
 *
 * Chromium comes from the system (Debian: `apt-get install -y chromium`); set CHROMIUM_PATH to
 * use another binary. A missing browser fails the test with that instruction: it is never skipped.
 */
import { type BrowserContext, chromium, type Page } from "playwright-core";
import assert from "node:assert/strict";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { type OauthStandIn, startOauthStandIn } from "../../sandbox/roblox/oauth.ts";
import { createApp } from "../../routes/mod.ts";
import { createTestApp, createTestProject, type TestApp } from "./test_app.ts";
import { encryptOauthClientSecret } from "../../lib/auth/oauth_app.ts";
import { type Project, updateProject } from "../../kv/projects.ts";
import type { Config } from "../../lib/config.ts";
import { createTestWallet, type TestWallet } from "./sign_in.ts";

/** Where the Chromium binary is expected. */
export const CHROMIUM_PATH = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  // `localhost` is what the app calls itself (a secure context, so __Host- cookies work over
  // http); pin it to the IPv4 loopback the test server listens on.
  "--host-resolver-rules=MAP localhost 127.0.0.1",
];

/** A running browser with one context; `close()` ends the process and removes its profile. */
export interface TestBrowser extends AsyncDisposable {
  context: BrowserContext;
  close(): Promise<void>;
}

/** Launches headless Chromium with a fresh temporary profile; throws with install instructions if missing. */
export async function launchBrowser(
  options: { viewport?: { width: number; height: number }; javaScriptEnabled?: boolean } = {},
): Promise<TestBrowser> {
  try {
    await Deno.stat(CHROMIUM_PATH);
  } catch {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}. Install it (Debian/Ubuntu: ` +
        "`apt-get install -y chromium`) or set CHROMIUM_PATH to a Chromium binary.",
    );
  }
  const userDataDir = await Deno.makeTempDir({ prefix: "chromium_profile_" });
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: options.viewport ?? { width: 1280, height: 800 },
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  context.setDefaultTimeout(15_000);
  const close = async () => {
    await context.close();
    await Deno.remove(userDataDir, { recursive: true }).catch(() => {});
  };
  return { context, close, [Symbol.asyncDispose]: close };
}

/** The real app on a real port, with the OAuth stand-in as its identity provider. */
export interface ServedApp extends AsyncDisposable {
  baseUrl: string;
  t: TestApp;
  idp: OauthStandIn;
  close(): Promise<void>;
}

/** Serves the app on 127.0.0.1 (port 0) and calls it `http://localhost:<port>`; `config` adds to the test config. */
export async function serveTestApp(config: Partial<Config> = {}): Promise<ServedApp> {
  const idp = await startOauthStandIn();
  let handler: (req: Request) => Response | Promise<Response> = () =>
    new Response("Starting", { status: 503 });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => handler(req),
  );
  const baseUrl = `http://localhost:${server.addr.port}`;
  const t = await createTestApp({ config: { ...config, baseUrl, idpUrl: idp.idpUrl } });
  // The context's clock is manual: the browser's cookies expire by Max-Age, the app by this clock.
  const app = createApp(t.ctx);
  handler = (req) => app.fetch(req);
  const close = async () => {
    await server.shutdown();
    await t.close();
    await idp.close();
  };
  return { baseUrl, t, idp, close, [Symbol.asyncDispose]: close };
}

/** Creates a project whose OAuth app is registered on the stand-in and saved in its settings. */
export async function createProjectWithOauth(served: ServedApp, name: string): Promise<Project> {
  const { project } = await createTestProject(served.t, { name });
  const clientId = `client-${project.id}`;
  const clientSecret = crypto.randomUUID();
  served.idp.registerClient({
    clientId,
    clientSecret,
    redirectUris: [`${served.baseUrl}/auth/idp/callback`],
    name,
  });
  const oauthClientSecretEnc = await encryptOauthClientSecret(
    served.t.ctx,
    project.id,
    clientSecret,
  );
  return (await updateProject(served.t.kv, project.id, (p) => ({
    ...p,
    settings: { ...p.settings, oauthClientId: clientId, oauthClientSecretEnc },
  })))!;
}

/** A browser signed in on a linking page, with its test wallet and the page's errors so far. */
export interface PlayerBrowser extends TestBrowser {
  wallet: TestWalletLog;
  page: Page;
  pageErrors: string[];
}

/**
 * Opens the project's linking page on a phone-sized screen with a Wallet Standard test wallet
 * installed, and signs in as Pixel Pilot (Roblox user 1002) through the Roblox stand-in.
 */
export async function signInOnLinkPage(
  served: ServedApp,
  project: Project,
): Promise<PlayerBrowser> {
  const browser = await launchBrowser({ viewport: { width: 390, height: 844 } });
  try {
    const wallet = await installTestWallet(browser.context, { name: "Test Wallet" });
    const page = browser.context.pages()[0] ?? await browser.context.newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    await page.goto(`${served.baseUrl}/link/${project.slug}`);
    await page.getByRole("link", { name: "Sign in with Roblox" }).click();
    await page.waitForURL((url) => url.href.startsWith(served.idp.url));
    await page.getByLabel(/Pixel Pilot/).check();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL(`${served.baseUrl}/link/${project.slug}`);
    return { ...browser, wallet, page, pageErrors };
  } catch (error) {
    await browser.close();
    throw error;
  }
}

/**
 * Signs a new developer in through the HTTP routes with the context's request client, which
 * shares the browser's cookie store: for tests about what comes after the wallet sign-in.
 */
export async function signInThroughRoutes(
  context: BrowserContext,
  baseUrl: string,
): Promise<TestWallet> {
  const wallet = createTestWallet();
  const origin = new URL(baseUrl).origin;
  const challenge = await context.request.post(`${baseUrl}/auth/wallet/challenge`, {
    headers: { origin },
    data: { address: wallet.address },
  });
  const { message } = await challenge.json();
  const verify = await context.request.post(`${baseUrl}/auth/wallet/verify`, {
    headers: { origin },
    data: { signature: wallet.sign(message) },
  });
  if (verify.status() !== 200) throw new Error(`Sign-in failed: ${await verify.text()}`);
  return wallet;
}

/** Creates a project from the dashboard's form, as a developer does; returns its id. */
export async function createProject(page: Page, baseUrl: string, name: string): Promise<string> {
  await page.goto(`${baseUrl}/dashboard`);
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByRole("button", { name: "Create project" }).click();
  await page.waitForURL(/\/dashboard\/projects\/[0-9A-Z]{26}$/);
  return new URL(page.url()).pathname.split("/").pop()!;
}

/** What the test wallet was asked to sign, in order. */
export interface TestWalletLog {
  address: string;
  signed: string[];
  connects: number;
}

/**
 * Registers a Wallet Standard wallet named `name` in every page of `context` (the
 * `wallet-standard:register-wallet` / `app-ready` handshake), implementing `standard:connect`
 * and `solana:signMessage`; signing calls back into Deno, where an ed25519 key signs.
 */
export async function installTestWallet(
  context: BrowserContext,
  options: { name?: string } = {},
): Promise<TestWalletLog> {
  const secretKey = ed25519.utils.randomSecretKey();
  const publicKey = ed25519.getPublicKey(secretKey);
  const log: TestWalletLog = { address: base58.encode(publicKey), signed: [], connects: 0 };
  await context.exposeBinding("__testWalletSign", (_source, bytes: number[]) => {
    const message = Uint8Array.from(bytes);
    log.signed.push(new TextDecoder().decode(message));
    return Array.from(ed25519.sign(message, secretKey));
  });
  await context.exposeBinding("__testWalletConnect", () => {
    log.connects++;
  });
  await context.addInitScript(registerWalletScript, {
    name: options.name ?? "Test Wallet",
    address: log.address,
    publicKey: Array.from(publicKey),
  });
  return log;
}

// Runs in the page, before its own scripts: a minimal wallet as an extension would inject it.
function registerWalletScript(input: { name: string; address: string; publicKey: number[] }) {
  const w = window as unknown as {
    __testWalletSign(bytes: number[]): Promise<number[]>;
    __testWalletConnect(): Promise<void>;
  };
  const chains = ["solana:mainnet", "solana:devnet"] as const;
  const account = {
    address: input.address,
    publicKey: new Uint8Array(input.publicKey),
    chains,
    features: ["solana:signMessage"],
    label: input.name,
  };
  let connected = false;
  const wallet = {
    version: "1.0.0",
    name: input.name,
    icon: "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=",
    chains,
    get accounts() {
      return connected ? [account] : [];
    },
    features: {
      "standard:connect": {
        version: "1.0.0",
        async connect() {
          await w.__testWalletConnect();
          connected = true;
          return { accounts: [account] };
        },
      },
      "standard:events": { version: "1.0.0", on: () => () => {} },
      "solana:signMessage": {
        version: "1.0.0",
        signMessage(...inputs: Array<{ message: Uint8Array }>) {
          return Promise.all(inputs.map(async ({ message }) => ({
            signedMessage: message,
            signature: new Uint8Array(await w.__testWalletSign(Array.from(message))),
          })));
        },
      },
    },
  };
  const callback = (api: { register(wallet: unknown): void }) => api.register(wallet);
  globalThis.dispatchEvent(
    new CustomEvent("wallet-standard:register-wallet", { detail: callback }),
  );
  globalThis.addEventListener("wallet-standard:app-ready", (event) => {
    callback((event as CustomEvent).detail);
  });
}

/** Asserts nothing makes the page scroll sideways. */
export async function assertNoOverflow(page: Page, what: string): Promise<void> {
  const widths = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    inner: globalThis.innerWidth,
  }));
  assert.ok(widths.scroll <= widths.inner, `${what} overflows: ${JSON.stringify(widths)}`);
}

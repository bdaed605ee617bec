/** Linking-flow test world: the real app, the Roblox OAuth stand-in, a cookie jar and test wallets. */
import type { Hono } from "hono";
import { ed25519 } from "@noble/curves/ed25519.js";
import { base58 } from "@scure/base";
import { type OauthStandIn, startOauthStandIn } from "../../sandbox/roblox/oauth.ts";
import { encryptOauthClientSecret } from "../../lib/auth/oauth_app.ts";
import type { Config } from "../../lib/config.ts";
import type { ManualClock } from "../../core/clock.ts";
import { type Project, updateProject } from "../../kv/projects.ts";
import { createTestApp, createTestProject, TEST_BASE_URL, type TestApp } from "./test_app.ts";

/** The service's own origin in tests, as the same-origin rule wants it. */
export const ORIGIN = new URL(TEST_BASE_URL).origin;

/** A browser's cookie store for one origin: keeps what responses set, sends it back. */
export class CookieJar {
  #cookies = new Map<string, string>();

  /** Applies every Set-Cookie of `res`; returns the raw Set-Cookie lines. */
  take(res: Response): string[] {
    const lines = res.headers.getSetCookie();
    for (const line of lines) {
      const [pair = "", ...attrs] = line.split(";").map((part) => part.trim());
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq);
      const expired = attrs.some((a) => /^max-age=0$/i.test(a));
      if (expired) this.#cookies.delete(name);
      else this.#cookies.set(name, pair.slice(eq + 1));
    }
    return lines;
  }
  /** The cookie's value, or undefined. */
  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }
  /** Sets a cookie by hand (to tamper with or replay one). */
  set(name: string, value: string): void {
    this.#cookies.set(name, value);
  }
  /** Forgets a cookie. */
  delete(name: string): void {
    this.#cookies.delete(name);
  }
  /** A copy of this jar. */
  clone(): CookieJar {
    const copy = new CookieJar();
    for (const [name, value] of this.#cookies) copy.set(name, value);
    return copy;
  }
  /** The Cookie request header. */
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}

/** Sends a request as a browser with `jar` would; POSTs carry our Origin unless `origin` says otherwise. */
export async function browse(
  app: Hono,
  path: string,
  init: {
    jar?: CookieJar | undefined;
    method?: string;
    json?: unknown;
    body?: string | undefined;
    origin?: string | null | undefined;
    headers?: Record<string, string>;
  } = {},
): Promise<Response> {
  const method = init.method ?? (init.json !== undefined ? "POST" : "GET");
  const headers = new Headers(init.headers);
  if (init.jar?.header()) headers.set("cookie", init.jar.header());
  const origin = init.origin === undefined ? (method === "GET" ? null : ORIGIN) : init.origin;
  if (origin !== null) headers.set("origin", origin);
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set("content-type", "application/json");
  }
  const res = await app.request(`${TEST_BASE_URL}${path}`, { method, headers, body: body ?? null });
  init.jar?.take(res);
  return res;
}

/** The test app plus the OAuth stand-in; dispose to close both. */
export interface LinkWorld extends AsyncDisposable {
  t: TestApp;
  app: Hono;
  clock: ManualClock;
  idp: OauthStandIn;
  close(): Promise<void>;
}

/** Starts the OAuth stand-in and the app configured to use it. */
export async function startLinkWorld(
  options: { config?: Partial<Config>; kvPath?: string | undefined } = {},
): Promise<LinkWorld> {
  const idp = await startOauthStandIn();
  const t = await createTestApp({
    config: { idpUrl: idp.idpUrl, ...options.config },
    kvPath: options.kvPath,
  });
  const close = async () => {
    await t.close();
    await idp.close();
  };
  return { t, app: t.app, clock: t.clock, idp, close, [Symbol.asyncDispose]: close };
}

/** Creates a project; with `oauth` (default true) registers its OAuth app on the stand-in and saves it. */
export async function createLinkProject(
  world: LinkWorld,
  options: { name?: string; cluster?: "devnet" | "mainnet"; oauth?: boolean; events?: boolean } =
    {},
): Promise<Project> {
  let { project } = await createTestProject(world.t, options);
  if (options.oauth ?? true) {
    const clientId = `client-${project.id}`;
    const clientSecret = `secret-${crypto.randomUUID()}`;
    world.idp.registerClient({
      clientId,
      clientSecret,
      redirectUris: [`${TEST_BASE_URL}/auth/idp/callback`],
      name: project.name,
    });
    const oauthClientSecretEnc = await encryptOauthClientSecret(
      world.t.ctx,
      project.id,
      clientSecret,
    );
    project = (await updateProject(world.t.kv, project.id, (p) => ({
      ...p,
      settings: { ...p.settings, oauthClientId: clientId, oauthClientSecretEnc },
    })))!;
  }
  if (options.events) {
    project = (await updateProject(world.t.kv, project.id, (p) => ({
      ...p,
      settings: { ...p.settings, universeId: "4242", publishingKeyEnc: "v1.unused.unused" },
    })))!;
  }
  return project;
}

/** Walks start, the stand-in's consent ("Allow" as `userId`) and callback; returns the final Location. */
export async function signInPlayer(
  world: LinkWorld,
  project: Project,
  userId: number,
  jar: CookieJar = new CookieJar(),
): Promise<{ jar: CookieJar; location: string }> {
  const start = await browse(world.app, `/auth/idp/start?next=/link/${project.slug}`, { jar });
  if (start.status !== 302) throw new Error(`Sign-in did not start: ${start.status}`);
  const back = await world.idp.authorizeAutomatically(start.headers.get("location")!, userId);
  const callback = new URL(back);
  const res = await browse(world.app, `${callback.pathname}${callback.search}`, { jar });
  return { jar, location: res.headers.get("location") ?? "" };
}

/** An ed25519 keypair acting as a browser wallet. */
export interface TestWallet {
  address: string;
  /** Base64 signature over the UTF-8 bytes of `message`. */
  sign(message: string): string;
}

/** Creates a random test wallet. */
export function createTestWallet(): TestWallet {
  const secretKey = ed25519.utils.randomSecretKey();
  const address = base58.encode(ed25519.getPublicKey(secretKey));
  return {
    address,
    sign: (message) => toBase64(ed25519.sign(new TextEncoder().encode(message), secretKey)),
  };
}

/** Standard base64 of bytes. */
export function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** Asks for a challenge for `wallet` and links it with a real signature; returns the verify response. */
export async function linkWith(
  world: LinkWorld,
  project: Project,
  jar: CookieJar,
  wallet: TestWallet,
): Promise<Response> {
  const challenge = await browse(world.app, `/api/link/${project.slug}/challenge`, {
    jar,
    json: { address: wallet.address },
  });
  if (challenge.status !== 200) throw new Error(`Challenge failed: ${await challenge.text()}`);
  const { nonce, message } = await challenge.json();
  return browse(world.app, `/api/link/${project.slug}/verify`, {
    jar,
    json: { nonce, signature: wallet.sign(message) },
  });
}

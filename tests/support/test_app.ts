/** Builds the real app on a fresh in-memory KV for one test. */
import type { Hono } from "hono";
import { ManualClock } from "../../core/clock.ts";
import type { Cluster } from "../../core/cluster.ts";
import type { Config } from "../../lib/config.ts";
import { type AppContext, createAppContext } from "../../lib/context.ts";
import { createApp } from "../../routes/mod.ts";
import { createProject, type Project } from "../../kv/projects.ts";
import { createApiKey } from "../../kv/api_keys.ts";
import { openKv } from "../../kv/open_kv.ts";
import { checkResponse } from "./openapi_conformance.ts";
import { migrateStore } from "../../lib/migrations/mod.ts";
import { checkSecret } from "../../lib/crypto/key_check.ts";

/** Base URL the test app believes it is served at. */
export const TEST_BASE_URL = "http://localhost:8000";

/** A complete config for tests; override what the test is about. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 8000,
    baseUrl: TEST_BASE_URL,
    kvPath: ":memory:",
    secret: "test-secret-test-secret-test-secret-0123",
    walletProvider: "managed",
    rpcUrls: { devnet: "http://127.0.0.1:9", mainnet: "http://127.0.0.1:9" },
    dasUrls: { devnet: undefined, mainnet: undefined },
    idpUrl: "http://127.0.0.1:9/oauth",
    publishUrl: "http://127.0.0.1:9",
    serviceName: "Blocklink",
    abuseLimits: {
      signin_challenge: 30,
      developer_account: 10,
      project_change: 20,
      watch_create: 60,
      key_create: 20,
      test_ping: 10,
      dashboard_change: 120,
      sandbox_airdrop: 20,
    },
    clientIpHeader: undefined,
    clientIpTrustedHops: 1,
    keyExport: true,
    webhooksAllowLoopback: false,
    ...overrides,
  };
}

/** A running test app with its context; `close()` releases the KV. */
export interface TestApp extends AsyncDisposable {
  app: Hono;
  ctx: AppContext;
  kv: Deno.Kv;
  clock: ManualClock;
  close(): Promise<void>;
}

/** Opens a KV (`:memory:` unless a path is given) and builds the real app on it. */
export async function createTestApp(
  options: {
    config?: Partial<Config>;
    kvPath?: string | undefined;
    clock?: ManualClock | undefined;
  } = {},
): Promise<TestApp> {
  const kv = await openKv(options.kvPath ?? ":memory:");
  const clock = options.clock ?? new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
  const config = testConfig({ kvPath: options.kvPath ?? ":memory:", ...options.config });
  const ctx = await createAppContext({ kv, config, clock });
  const app = createApp(ctx);
  const close = async () => {
    // Gives back leased quota allowance (and stops its timers) while the store is still open.
    await ctx.quota.close();
    await ctx.tx.allowances.close();
    await ctx.requestLog.flush();
    kv.close();
  };
  return { app, ctx, kv, clock, close, [Symbol.asyncDispose]: close };
}

/**
 * Opens the store at `kvPath` as an instance starts on it, with the given SECRETs: migrated
 * (`lib/migrations/`) and its SECRET checked; a refused start closes the app and throws.
 */
export async function startOnStore(
  kvPath: string,
  secret: string,
  previous?: string,
): Promise<TestApp> {
  const app = await createTestApp({ kvPath, config: { secret, secretPrevious: previous } });
  try {
    await migrateStore(app.ctx);
    await checkSecret(app.ctx);
    return app;
  } catch (error) {
    await app.close();
    throw error;
  }
}

/** Creates a project with one API key; returns both. */
export async function createTestProject(
  t: { ctx: AppContext },
  options: { name?: string; cluster?: Cluster; developer?: string } = {},
): Promise<{ project: Project; apiKey: string }> {
  const project = await createProject(t.ctx.kv, {
    name: options.name ?? `Game ${crypto.randomUUID().slice(0, 8)}`,
    cluster: options.cluster ?? "devnet",
    createdBy: options.developer ?? "Dev1111111111111111111111111111111111111111",
    now: t.ctx.clock.now(),
  });
  const { plaintext } = await createApiKey(t.ctx.kv, project.id, t.ctx.clock.now());
  return { project, apiKey: plaintext };
}

/**
 * Sends a request to the app; `json` becomes the body with the JSON content type. `/v1` and
 * `/health` answers are checked against the OpenAPI document (a mismatch throws).
 */
export async function call(
  app: Hono,
  path: string,
  init: {
    method?: string;
    apiKey?: string | undefined;
    json?: unknown;
    body?: string | undefined;
    headers?: Record<string, string>;
  } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.apiKey) headers.set("x-api-key", init.apiKey);
  let body = init.body;
  if (init.json !== undefined) {
    body = JSON.stringify(init.json);
    headers.set("content-type", "application/json");
  }
  const request = new Request(`${TEST_BASE_URL}${path}`, {
    method: init.method ?? "GET",
    headers,
    body: body ?? null,
  });
  const response = await app.request(request);
  // Every answer a test receives must be one the OpenAPI document describes.
  await checkResponse(request, response);
  return response;
}

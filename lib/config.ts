/** Service configuration from environment variables, validated once at start-up. */
import { z } from "zod";
import { log } from "../core/log.ts";
import { randomToken } from "../core/ids.ts";
import type { Cluster } from "../core/cluster.ts";
import { isRemoteKvPath } from "../kv/open_kv.ts";
import type { AbuseLimits } from "./quota/abuse_limits.ts";
import { nameProblem } from "./names.ts";
import { issueText } from "./issue_text.ts";

/** The validated configuration every part of the service reads. */
export interface Config {
  port: number;
  baseUrl: string;
  /** Undefined means `Deno.openKv()` with no path (Deno Deploy's managed KV). */
  kvPath: string | undefined;
  secret: string;
  // --- SECRET rotation (issue 11) ---
  /** The SECRET being rotated away: opens what is still sealed under it, which is re-encrypted under `secret`. */
  secretPrevious?: string | undefined;
  /**
   * The SECRET about to replace `secret`, announced before a rotation: it only opens values sealed
   * and verifies sessions signed under it, so this instance keeps working beside instances that
   * already rotated to it.
   */
  secretNext?: string | undefined;
  // --- end SECRET rotation ---
  walletProvider: "managed" | "none";
  rpcUrls: Record<Cluster, string>;
  dasUrls: Record<Cluster, string | undefined>;
  idpUrl: string;
  publishUrl: string;
  serviceName: string;
  /** Abuse limits per client (issue 12): uses allowed per window of each capped action. */
  abuseLimits: AbuseLimits;
  /** Header our proxies append the client's address to; unset: the connection's address. */
  clientIpHeader: string | undefined;
  /** How many of our proxies append to `clientIpHeader`: the client is that many entries from the end. */
  clientIpTrustedHops: number;
  /** False when owners may not export their managed wallet's key on this deployment (`KEY_EXPORT=off`). */
  keyExport: boolean;
  /** Webhooks may go to loopback addresses (and `http://` there): a sandbox's own receiver. */
  webhooksAllowLoopback: boolean;
  /**
   * The service's own Roblox OAuth app for connecting games (ROBLOX_CONNECT_CLIENT_ID and _SECRET):
   * projects without an app of their own connect through it. Absent: each project saves one.
   */
  robloxConnectApp?: { clientId: string; clientSecret: string } | undefined;
}

const url = z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ""));

function limit(fallback: number) {
  return z.coerce.number().int().min(1).max(1_000_000).default(fallback);
}

const MIN_SECRET_LENGTH = 32;

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  BASE_URL: url.optional(),
  KV_PATH: z.string().min(1).optional(),
  SECRET: z.string().min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters`)
    .optional(),
  SECRET_PREVIOUS: z.string()
    .min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters`).optional(),
  SECRET_NEXT: z.string()
    .min(MIN_SECRET_LENGTH, `must be at least ${MIN_SECRET_LENGTH} characters`).optional(),
  WALLET_PROVIDER: z.enum(["managed", "none"]).default("managed"),
  RPC_URL_DEVNET: url.default("https://api.devnet.solana.com"),
  RPC_URL_MAINNET: url.default("https://api.mainnet-beta.solana.com"),
  DAS_URL_DEVNET: url.optional(),
  DAS_URL_MAINNET: url.optional(),
  IDP_URL: url.default("https://apis.roblox.com/oauth"),
  PUBLISH_URL: url.default("https://apis.roblox.com"),
  // Shown on every page and written into every sign-in message a wallet signs.
  SERVICE_NAME: z.string().min(1).max(60).superRefine((name, check) => {
    const problem = nameProblem(name);
    if (problem) check.addIssue({ code: "custom", message: problem });
  }).default("Blocklink"),
  // Abuse limits (README "Abuse limits").
  LIMIT_SIGNIN_CHALLENGES_PER_MINUTE: limit(30),
  LIMIT_NEW_ACCOUNTS_PER_HOUR: limit(10),
  LIMIT_PROJECT_CHANGES_PER_HOUR: limit(20),
  LIMIT_NEW_WATCHES_PER_HOUR: limit(60),
  LIMIT_NEW_KEYS_PER_HOUR: limit(20),
  LIMIT_TEST_PINGS_PER_MINUTE: limit(10),
  LIMIT_DASHBOARD_CHANGES_PER_HOUR: limit(120),
  LIMIT_SANDBOX_AIRDROPS_PER_HOUR: limit(20),
  CLIENT_IP_HEADER: z.string().regex(/^[A-Za-z0-9-]{1,64}$/, "must be a header name").optional(),
  CLIENT_IP_TRUSTED_HOPS: z.coerce.number().int().min(1).max(10).optional(),
  KEY_EXPORT: z.enum(["on", "off"]).default("on"),
  // Off everywhere but a sandbox: a webhook to loopback reaches this machine's own services.
  ROBLOX_CONNECT_CLIENT_ID: z.string().regex(/^[\x21-\x7e]{1,200}$/, "must be one word").optional(),
  ROBLOX_CONNECT_CLIENT_SECRET: z.string().regex(/^[\x21-\x7e]{1,4096}$/, "must be one word")
    .optional(),
  WEBHOOKS_ALLOW_LOOPBACK: z.enum(["0", "1", "false", "true"], "must be 0 or 1").default("0")
    .transform((value) => value === "1" || value === "true"),
});

/** Thrown when the environment holds a bad value; the message names each variable and problem. */
export class ConfigError extends Error {}

/** Options for `loadConfig`. */
interface LoadConfigOptions {
  /** True on Deno Deploy: KV is the managed one and SECRET must be given. */
  onDeploy?: boolean;
  /** Where a generated SECRET is kept outside Deno Deploy. */
  dataDir?: string;
}

/** Reads and validates the environment; generates and keeps a SECRET on first run outside Deno Deploy. */
export function loadConfig(
  env: Record<string, string | undefined>,
  options: LoadConfigOptions = {},
): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== ""));
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const problems = issueText(parsed.error.issues, { whole: "environment" });
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const dataDir = options.dataDir ?? "./data";
  if (options.onDeploy && !e.SECRET) {
    throw new ConfigError("Invalid configuration: SECRET: required on Deno Deploy");
  }
  checkRemoteStore(e.KV_PATH, e.SECRET, cleaned);
  if (e.SECRET_NEXT !== undefined && e.SECRET_NEXT === (e.SECRET ?? localSecret(dataDir))) {
    throw new ConfigError(
      "Invalid configuration: SECRET_NEXT: is SECRET itself (it names the SECRET that will replace it)",
    );
  }
  if (
    (e.ROBLOX_CONNECT_CLIENT_ID === undefined) !== (e.ROBLOX_CONNECT_CLIENT_SECRET === undefined)
  ) {
    throw new ConfigError(
      "Invalid configuration: ROBLOX_CONNECT_CLIENT_ID and ROBLOX_CONNECT_CLIENT_SECRET: set both or neither",
    );
  }
  if (e.CLIENT_IP_TRUSTED_HOPS !== undefined && !e.CLIENT_IP_HEADER) {
    throw new ConfigError(
      "Invalid configuration: CLIENT_IP_TRUSTED_HOPS: needs CLIENT_IP_HEADER (the header the proxies append to)",
    );
  }
  return {
    port: e.PORT,
    baseUrl: e.BASE_URL ?? `http://localhost:${e.PORT}`,
    kvPath: e.KV_PATH ?? (options.onDeploy ? undefined : `${dataDir}/blocklink.kv`),
    secret: e.SECRET ?? localSecret(dataDir),
    secretPrevious: e.SECRET_PREVIOUS,
    secretNext: e.SECRET_NEXT,
    walletProvider: e.WALLET_PROVIDER,
    rpcUrls: { devnet: e.RPC_URL_DEVNET, mainnet: e.RPC_URL_MAINNET },
    dasUrls: { devnet: e.DAS_URL_DEVNET, mainnet: e.DAS_URL_MAINNET },
    idpUrl: e.IDP_URL,
    publishUrl: e.PUBLISH_URL,
    serviceName: e.SERVICE_NAME,
    abuseLimits: {
      signin_challenge: e.LIMIT_SIGNIN_CHALLENGES_PER_MINUTE,
      developer_account: e.LIMIT_NEW_ACCOUNTS_PER_HOUR,
      project_change: e.LIMIT_PROJECT_CHANGES_PER_HOUR,
      watch_create: e.LIMIT_NEW_WATCHES_PER_HOUR,
      key_create: e.LIMIT_NEW_KEYS_PER_HOUR,
      test_ping: e.LIMIT_TEST_PINGS_PER_MINUTE,
      dashboard_change: e.LIMIT_DASHBOARD_CHANGES_PER_HOUR,
      sandbox_airdrop: e.LIMIT_SANDBOX_AIRDROPS_PER_HOUR,
    },
    clientIpHeader: e.CLIENT_IP_HEADER?.toLowerCase(),
    clientIpTrustedHops: e.CLIENT_IP_TRUSTED_HOPS ?? 1,
    keyExport: e.KEY_EXPORT === "on",
    webhooksAllowLoopback: e.WEBHOOKS_ALLOW_LOOPBACK,
    robloxConnectApp: e.ROBLOX_CONNECT_CLIENT_ID && e.ROBLOX_CONNECT_CLIENT_SECRET
      ? { clientId: e.ROBLOX_CONNECT_CLIENT_ID, clientSecret: e.ROBLOX_CONNECT_CLIENT_SECRET }
      : undefined,
  };
}

// --- Remote store (issue 17) ---------------------------------------------------------------

/**
 * Several instances on one remote store (KV Connect) must share one SECRET: a secret generated per
 * machine would leave each instance unable to read what the others encrypted. And Deno's client
 * needs the server's access token, which it reads from DENO_KV_ACCESS_TOKEN.
 */
function checkRemoteStore(
  kvPath: string | undefined,
  secret: string | undefined,
  env: Record<string, string | undefined>,
): void {
  // No KV_PATH: a local file, or Deploy's managed store (no token; its SECRET is checked above).
  if (kvPath === undefined || !isRemoteKvPath(kvPath)) return;
  const problems = [];
  if (!secret) problems.push("SECRET: required with a remote store (KV_PATH is a URL)");
  if (!env.DENO_KV_ACCESS_TOKEN) {
    problems.push("DENO_KV_ACCESS_TOKEN: required with a remote store (KV_PATH is a URL)");
  }
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  }
}

// --- End of remote store ---------------------------------------------------------------------

/** True when `baseUrl` is a loopback origin: a local playground, never a deployment. */
export function isLocalOrigin(baseUrl: string): boolean {
  const host = new URL(baseUrl).hostname;
  return host === "localhost" || host === "127.0.0.1" || host === "[::1]";
}

/** True when running on Deno Deploy. */
export function isDenoDeploy(): boolean {
  return Boolean(Deno.env.get("DENO_DEPLOYMENT_ID"));
}

// --- Generated SECRET file (issue 11) ---
/**
 * Reads the generated SECRET, or generates it on the first start. The file is created whole or
 * not at all (written to a temporary name, then hard-linked into place, which fails if the name
 * exists), so two first starts at once both end up with the one that won, never a half-written
 * file; it is readable by its owner only.
 */
function localSecret(dataDir: string): string {
  const path = `${dataDir}/secret`;
  const kept = readSecretFile(path);
  if (kept !== null) return kept;
  Deno.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${randomToken(8)}.tmp`;
  Deno.writeTextFileSync(temporary, randomToken(32), { mode: 0o600, createNew: true });
  try {
    Deno.linkSync(temporary, path);
    log("warn", "SECRET is not set: generated one and kept it in the data folder", { path });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
  } finally {
    Deno.removeSync(temporary);
  }
  return readSecretFile(path)!;
}

function readSecretFile(path: string): string | null {
  let secret: string;
  try {
    secret = Deno.readTextFileSync(path).trim();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  if (secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(
      `Invalid configuration: SECRET: the generated secret file ${path} must hold at least ` +
        `${MIN_SECRET_LENGTH} characters (restore it, or set SECRET)`,
    );
  }
  const mode = Deno.statSync(path).mode;
  if (mode !== null && (mode & 0o077) !== 0) {
    Deno.chmodSync(path, 0o600);
    log("warn", "The secret file was readable by others: made it owner-only", { path });
  }
  return secret;
}
// --- end generated SECRET file ---

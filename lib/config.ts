/** Service configuration from environment variables, validated once at start-up. */
import { z } from "zod";
import { log } from "./log.ts";
import { randomToken } from "./ids.ts";

/** A chain cluster a project is bound to. */
export type Cluster = "devnet" | "mainnet";

/** The validated configuration every part of the service reads. */
export interface Config {
  port: number;
  baseUrl: string;
  /** Undefined means `Deno.openKv()` with no path (Deno Deploy's managed KV). */
  kvPath: string | undefined;
  secret: string;
  walletProvider: "managed" | "none";
  rpcUrls: Record<Cluster, string>;
  dasUrls: Record<Cluster, string | undefined>;
  idpUrl: string;
  publishUrl: string;
  serviceName: string;
}

const url = z.url({ protocol: /^https?$/ }).transform((u) => u.replace(/\/+$/, ""));

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  BASE_URL: url.optional(),
  KV_PATH: z.string().min(1).optional(),
  SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  WALLET_PROVIDER: z.enum(["managed", "none"]).default("managed"),
  RPC_URL_DEVNET: url.default("https://api.devnet.solana.com"),
  RPC_URL_MAINNET: url.default("https://api.mainnet-beta.solana.com"),
  DAS_URL_DEVNET: url.optional(),
  DAS_URL_MAINNET: url.optional(),
  IDP_URL: url.default("https://apis.roblox.com/oauth"),
  PUBLISH_URL: url.default("https://apis.roblox.com"),
  SERVICE_NAME: z.string().min(1).max(60).default("Blocklink"),
});

/** Thrown when the environment holds a bad value; the message names each variable and problem. */
export class ConfigError extends Error {}

/** Options for `loadConfig`. */
export interface LoadConfigOptions {
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
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join("; ")}`);
  }
  const e = parsed.data;
  const dataDir = options.dataDir ?? "./data";
  if (options.onDeploy && !e.SECRET) {
    throw new ConfigError("Invalid configuration: SECRET: required on Deno Deploy");
  }
  checkRemoteStore(e.KV_PATH, e.SECRET, cleaned);
  return {
    port: e.PORT,
    baseUrl: e.BASE_URL ?? `http://localhost:${e.PORT}`,
    kvPath: e.KV_PATH ?? (options.onDeploy ? undefined : `${dataDir}/blocklink.kv`),
    secret: e.SECRET ?? localSecret(dataDir),
    walletProvider: e.WALLET_PROVIDER,
    rpcUrls: { devnet: e.RPC_URL_DEVNET, mainnet: e.RPC_URL_MAINNET },
    dasUrls: { devnet: e.DAS_URL_DEVNET, mainnet: e.DAS_URL_MAINNET },
    idpUrl: e.IDP_URL,
    publishUrl: e.PUBLISH_URL,
    serviceName: e.SERVICE_NAME,
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
  if (!kvPath || !/^https?:\/\//.test(kvPath)) return;
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

/** True when running on Deno Deploy. */
export function isDenoDeploy(): boolean {
  return Boolean(Deno.env.get("DENO_DEPLOYMENT_ID"));
}

function localSecret(dataDir: string): string {
  const path = `${dataDir}/secret`;
  try {
    return Deno.readTextFileSync(path).trim();
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  Deno.mkdirSync(dataDir, { recursive: true });
  const secret = randomToken(32);
  Deno.writeTextFileSync(path, secret, { mode: 0o600, createNew: true });
  log("warn", "SECRET is not set: generated one and kept it in the data folder", { path });
  return secret;
}

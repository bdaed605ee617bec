/**
 * Runs the service as a real process (`service_process.ts`, composed as `main.ts` does) with the
 * environment a test gives it, and keeps its log lines; and calls it as a browser or a game
 * server would. Used by the tests that need real processes: the chaos run (SIGKILL), rolling
 * SECRET rotation, floods from many addresses.
 */
import type { Address } from "@solana/kit";
import type { CookieJar, TestWallet } from "./sign_in.ts";

/** The `BASE_URL` processes are started with (unless the test gives another): our Origin. */
export const PROCESS_BASE_URL = "http://localhost:8000";

/** A running service process. */
export interface ServiceProcess extends AsyncDisposable {
  url: string;
  child: Deno.ChildProcess;
  /** Its output so far, one line each (the last 2,000 lines). */
  logs: string[];
  /** Ends it at once, as a crash would (SIGKILL). */
  kill(): Promise<void>;
  /** Asks it to stop (SIGTERM) and waits for it. */
  stop(): Promise<void>;
}

/** Thrown when the process exits before it serves (a refused start); `output` is everything it printed. */
export class ServiceStartError extends Error {
  constructor(readonly output: string) {
    super(`The service exited before serving:\n${output}`);
  }
}

const MAX_LINES = 2_000;
const SERVICE_PROCESS = new URL("./service_process.ts", import.meta.url).pathname;

/**
 * Starts the service with `env` on a free port (the process also inherits this one's
 * environment) and resolves once it serves; throws `ServiceStartError` if it exits first.
 */
export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    // No subprocesses, as on Deno Deploy: the islands bundle is not built at each start.
    args: ["run", "-A", "--deny-run", "--unstable-kv", "--unstable-cron", SERVICE_PROCESS],
    env: { PORT: "0", BASE_URL: PROCESS_BASE_URL, ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const logs: string[] = [];
  let ready: (port: number) => void = () => {};
  const port = new Promise<number>((resolve) => ready = resolve);
  const drain = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    let buffer = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) {
        logs.push(line);
        if (line.startsWith('{"ready":true')) ready(JSON.parse(line).port);
      }
      if (logs.length > MAX_LINES) logs.splice(0, logs.length - MAX_LINES);
    }
    if (buffer) logs.push(buffer);
  };
  // Both streams are read to their end, so the process never blocks on a full pipe.
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]);
  const exited = child.status.then(async () => {
    await drained;
    return null;
  });
  const served = await Promise.race([port, exited]);
  if (served === null) throw new ServiceStartError(logs.join("\n"));
  const end = async (signal: Deno.Signal) => {
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
    await child.status;
    await drained;
  };
  return {
    url: `http://127.0.0.1:${served}`,
    child,
    logs,
    kill: () => end("SIGKILL"),
    stop: () => end("SIGTERM"),
    [Symbol.asyncDispose]: () => end("SIGKILL"),
  };
}

/** Sends a request to the process as a browser at `PROCESS_BASE_URL` would: JSON, our Origin on a POST, the jar's cookies (kept from the answer). */
export async function callProcess(
  service: { url: string },
  path: string,
  init: {
    method?: "GET" | "POST";
    json?: unknown;
    jar?: CookieJar;
    headers?: Record<string, string>;
  } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  const method = init.method ?? (init.json === undefined ? "GET" : "POST");
  if (method === "POST") {
    headers.set("origin", new URL(PROCESS_BASE_URL).origin);
    if (!headers.has("accept")) headers.set("accept", "application/json");
  }
  if (init.json !== undefined) headers.set("content-type", "application/json");
  if (init.jar?.header()) headers.set("cookie", init.jar.header());
  const res = await fetch(`${service.url}${path}`, {
    method,
    headers,
    body: init.json === undefined ? null : JSON.stringify(init.json),
  });
  init.jar?.take(res);
  return res;
}

/** Signs `wallet` in to the dashboard of the process; the jar then holds its session (on a 200). */
export async function signInOnProcess(
  service: { url: string },
  wallet: TestWallet,
  init: { jar: CookieJar; headers?: Record<string, string> },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const asked = await callProcess(service, "/auth/wallet/challenge", {
    ...init,
    json: { address: wallet.address },
  });
  const challenge = await asked.json();
  if (asked.status !== 200) return { status: asked.status, body: challenge };
  const verify = await callProcess(service, "/auth/wallet/verify", {
    ...init,
    json: { signature: wallet.sign(challenge.message) },
  });
  return { status: verify.status, body: await verify.json() };
}

/** A project that can pay, made through a process's dashboard. */
export interface PayingGame {
  projectId: string;
  wallet: Address;
  apiKey: string;
}

/**
 * Makes, through the dashboard of `service` as the developer of `jar`, a devnet project with its
 * managed wallet funded with 0.1 SOL on `chain`, a policy of 1 SOL per transfer and an API key.
 */
export async function createPayingGame(
  service: { url: string },
  jar: CookieJar,
  chain: { airdrop(to: Address, lamports: bigint): Promise<unknown> },
  name: string,
): Promise<PayingGame> {
  const project = await answered(
    await callProcess(service, "/dashboard/projects", { jar, json: { name, cluster: "devnet" } }),
    201,
  );
  const base = `/dashboard/projects/${project.id}`;
  const { walletAddress } = await answered(
    await callProcess(service, `${base}/wallet`, { jar, method: "POST" }),
    201,
  );
  await answered(
    await callProcess(service, `${base}/policy`, { jar, json: { maxSolPerTransfer: "1" } }),
    200,
  );
  const { key } = await answered(
    await callProcess(service, `${base}/keys`, { jar, method: "POST" }),
    201,
  );
  await chain.airdrop(walletAddress as Address, 100_000_000n);
  return { projectId: String(project.id), wallet: walletAddress as Address, apiKey: String(key) };
}

// The JSON body of an answer that must have `status`.
async function answered(res: Response, status: number): Promise<Record<string, unknown>> {
  const body = await res.json();
  if (res.status !== status) {
    throw new Error(`Expected ${status}, got ${res.status}: ${JSON.stringify(body)}`);
  }
  return body;
}

/** Service processes sharing one store file and one chain, all killed (and the file removed) at disposal. */
export interface ProcessFleet extends AsyncDisposable {
  kvPath: string;
  /** Starts a process on the store with `env` (SECRETs and the like) beside the fleet's own. */
  start(env: Record<string, string>): Promise<ServiceProcess>;
  /** Stops one process as a deploy would (SIGTERM), leaving the others running. */
  stop(service: ServiceProcess): Promise<void>;
}

/** A fleet on a new store file and the chain at `rpcUrl` (Roblox's services unreachable). */
export async function startProcessFleet(rpcUrl: string): Promise<ProcessFleet> {
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  const running: ServiceProcess[] = [];
  return {
    kvPath,
    async start(env) {
      const service = await startServiceProcess({
        KV_PATH: kvPath,
        RPC_URL_DEVNET: rpcUrl,
        RPC_URL_MAINNET: rpcUrl,
        PUBLISH_URL: "http://127.0.0.1:9",
        IDP_URL: "http://127.0.0.1:9/oauth",
        ...env,
      });
      running.push(service);
      return service;
    },
    async stop(service) {
      running.splice(running.indexOf(service), 1);
      await service.stop();
    },
    async [Symbol.asyncDispose]() {
      for (const service of running) await service.kill();
      await Deno.remove(kvPath).catch(() => {});
    },
  };
}

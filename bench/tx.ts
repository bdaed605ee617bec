/**
 * Bench: `POST /v1/tx/transfer-sol` against the sandbox cluster, with the confirmation wait set to
 * zero so the route answers `submitted` right after sending: what is measured is the service's own
 * work per request (key, quota, policy, reservation, build, sign, store, send), not the chain's.
 *
 * The baseline is a bare `Deno.serve` doing only the chain part of the same work per request
 * (latest blockhash, build, sign, send with preflight) against the same cluster, for the same
 * transaction as the service's on devnet (the transfer and the memo naming a unique attempt id, so
 * the cluster runs the same programs for both); the difference is the service's overhead. A second
 * baseline adds the floor of any exactly-once payout to it: one durable commit of one record before
 * the send (the key taken) and one after (sent), on a store file in the same directory as the
 * service's, so the part of the overhead that is the disk's sync is measured beside it. Each is run
 * with one connection (latency) and with 64 connections over many projects (throughput), in rounds
 * the servers take in turn (`ROUNDS`). The cluster runs in its own process, as a real node would.
 *
 * The durable baseline and the service run a second time on the store Deno Deploy gives them: the
 * KV Connect test server in its own process with 10 ms on every round trip (`remote.ts`). There the
 * service's overhead is mostly round trips: its budget is two commits in sequence and one read,
 * overlapped with the chain work, so its p50 over the chain-work baseline is held against two round
 * trips and 3 ms (`roundLines`).
 *
 * Run as a script with BENCH_ROLE set, this file is also the bench's server processes.
 * `deno run -A bench/tx.ts` runs the bench alone.
 */
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { signInstructions } from "../sandbox/chain/fixtures.ts";
import { memoInstruction } from "../lib/tx/build/build.ts";
import { ulid } from "../core/ids.ts";
import { type LoadResult, resultTable, roundRobin, runLoad, startServer } from "./load.ts";
import { type CallCounts, perRequest } from "./call_counts.ts";
import { LATENCY_MS, startRemoteStore } from "./remote.ts";

const PROJECTS = Number(Deno.env.get("BENCH_TX_PROJECTS") ?? 200);
/** Projects the one-connection runs over KV Connect rotate over: each pays about once a second. */
const REMOTE_LATENCY_PROJECTS = 20;
const AMOUNT = "0.001";
const LAMPORTS = 1_000_000n;

/**
 * A run, merged from its rounds: requests/s over all of them, p50 and p99 the median of the
 * rounds', CPU per request over all of them; the service's with its store commits, reads and RPC
 * calls per request.
 */
export interface TxLoadResult extends LoadResult {
  calls?: string;
  /** Each round's own figures, in order. */
  rounds: LoadResult[];
}

/**
 * Rounds each run is cut into (`BENCH_TX_ROUNDS`). The servers take turns round by round, so a
 * machine whose speed drifts over the minute of the bench (this project's CI and development
 * machines are shared) slows every run alike instead of whichever ran at that moment.
 */
const ROUNDS = Number(Deno.env.get("BENCH_TX_ROUNDS") ?? 3);
// Each round's load starts after a short warm-up of its own connections.
const WARM_SECONDS = 1;

/** Latency (one connection, the fetch loop) and throughput (64, wrk). */
const CONNECTIONS = [1, 64];

/**
 * The servers (their `BENCH_ROLE`, row label, and whether their store is the KV Connect test
 * server), in the table's order.
 */
const RUNS = [
  ["baseline", "chain-work baseline", false],
  ["durable", "baseline + 2 durable commits", false],
  ["service", "transfer-sol", false],
  ["durable", `baseline + 2 durable commits, KV Connect ${LATENCY_MS} ms`, true],
  ["service", `transfer-sol, KV Connect ${LATENCY_MS} ms`, true],
] as const;

/** The ten runs: the baselines and the service on each store, at one connection and at 64. */
export async function benchTx(seconds: number): Promise<TxLoadResult[]> {
  const self = new URL(import.meta.url).pathname;
  const chain = await startServer(self, { BENCH_ROLE: "chain" });
  const rpcUrl = String(chain.info.rpcUrl);
  const servers: Awaited<ReturnType<typeof startServer>>[] = [];
  const stores: Awaited<ReturnType<typeof startRemoteStore>>[] = [];
  try {
    for (const [role, , remote] of RUNS) {
      // Each remote server on a store of its own, as each local one has its own file.
      const store = remote ? await startRemoteStore() : null;
      if (store) stores.push(store);
      const server = await startServer(self, {
        BENCH_ROLE: role,
        BENCH_RPC_URL: rpcUrl,
        ...store?.env,
      });
      servers.push(server);
      const keys = server.info.keys as string[];
      await payOnceEach(
        txLoad(String(server.info.url), keys, `${role}-prime`)("prime"),
        keys.length,
      );
    }
    // Every run's rounds, in the table's order.
    const rounds = new Map<string, { results: LoadResult[]; calls: [CallCounts, CallCounts][] }>();
    for (const [, label] of RUNS) {
      for (const connections of CONNECTIONS) {
        rounds.set(runName(label, connections), { results: [], calls: [] });
      }
    }
    for (let round = 0; round < ROUNDS; round++) {
      for (const connections of CONNECTIONS) {
        for (const [i, [role, label, remote]] of RUNS.entries()) {
          const server = servers[i]!;
          const url = String(server.info.url);
          const all = server.info.keys as string[];
          // One connection over KV Connect pays a few times a second: over all the projects, each
          // would come back after its key's 10 s in the guard's cache, which the local runs keep.
          const keys = remote && connections === 1 ? all.slice(0, REMOTE_LATENCY_PROJECTS) : all;
          const load = txLoad(url, keys, `${role}-${connections}-${round}`);
          // wrk needs as many connections as its two threads: one connection uses the fetch loop.
          const pick = (phase: string) => {
            const options = load(phase);
            return connections === 1 ? { request: options.request } : options;
          };
          await runLoad(label, url, { connections, seconds: WARM_SECONDS, ...pick("warm") });
          const before = role === "service" ? await callCounts(url) : null;
          const name = runName(label, connections);
          const result = await runLoad(name, url, {
            connections,
            seconds: seconds / ROUNDS,
            serverPid: server.pid,
            ...pick("run"),
          });
          const runs = rounds.get(name)!;
          runs.results.push(result);
          if (before) runs.calls.push([before, await callCounts(url)]);
        }
      }
    }
    return [...rounds.values()].map(({ results, calls }) => merged(results, calls));
  } finally {
    for (const server of servers) await server.stop();
    for (const store of stores) await store.stop();
    await chain.stop();
  }
}

/** A run's row name: its server's label and its connections. */
function runName(label: string, connections: number): string {
  return `${label}, ${connections} conn.`;
}

/** One run's rounds as one result (`TxLoadResult`). */
function merged(rounds: LoadResult[], calls: [CallCounts, CallCounts][]): TxLoadResult {
  const first = rounds[0]!;
  const requests = rounds.reduce((sum, r) => sum + r.requests, 0);
  const seconds = rounds.reduce((sum, r) => sum + r.requests / r.rps, 0);
  const cpu = rounds.every((r) => r.serverCpuUs !== undefined)
    ? rounds.reduce((sum, r) => sum + r.serverCpuUs! * r.requests, 0) / requests
    : undefined;
  return {
    name: first.name,
    tool: first.tool,
    requests,
    rps: requests / seconds,
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    errors: rounds.reduce((sum, r) => sum + r.errors, 0),
    ...(cpu === undefined ? {} : { serverCpuUs: cpu }),
    ...(calls.length ? { calls: perRequest(calls, requests) } : {}),
    rounds,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Every project pays once before the runs, so they measure each project's steady state (its key
 * cached, its limits' released counters read, which a project does once in 10 minutes) and not,
 * for most of the 200, its first payout: a one-second warm-up reaches only a quarter of them.
 */
async function payOnceEach(load: { request: () => Request }, projects: number): Promise<void> {
  let left = projects;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (left-- > 0) {
      const res = await fetch(load.request());
      await res.body?.cancel();
    }
  }));
}

async function callCounts(url: string): Promise<CallCounts> {
  return await (await fetch(`${url}/bench/calls`)).json();
}

/** The store commits, reads and RPC calls per request of each service run, one line each. */
export function callTable(results: TxLoadResult[]): string {
  return results.filter((r) => r.calls).map((r) => `- ${r.name}: ${r.calls}`).join("\n");
}

/**
 * Each round's service and durable baseline against that round's chain-work baseline, one line
 * per comparison: the spread the merged rows hide. On KV Connect, the service's p50 over the
 * baseline is held against its budget: two round trips (its two commits in sequence) and 3 ms.
 */
export function roundLines(results: TxLoadResult[]): string {
  const [[, baseline], [, durable], [, service], [, remoteDurable], [, remoteService]] = RUNS;
  const run = (label: string, connections: number) =>
    results.find((r) => r.name === runName(label, connections))!.rounds;
  const byRound = (value: (round: number) => string) =>
    run(baseline, 1).map((_, round) => value(round)).join(", ");
  const over = (label: string, percentile: "p50Ms" | "p99Ms") =>
    byRound((round) => {
      const ms = run(label, 1)[round]![percentile] - run(baseline, 1)[round]![percentile];
      return `${ms >= 0 ? "+" : ""}${ms.toFixed(2)}`;
    });
  return [
    `- ${service}, 64 conn., ratio to the ${baseline} by round: ${
      byRound((round) => (run(service, 64)[round]!.rps / run(baseline, 64)[round]!.rps).toFixed(2))
    }`,
    `- ${service}, 1 conn., over the ${baseline} by round: p50 ${over(service, "p50Ms")} ms, p99 ${
      over(service, "p99Ms")
    } ms`,
    `- ${durable}, 1 conn., over the ${baseline} by round: p50 ${over(durable, "p50Ms")} ms`,
    `- ${remoteService}, 64 conn., ratio to the ${baseline} by round: ${
      byRound((round) =>
        (run(remoteService, 64)[round]!.rps / run(baseline, 64)[round]!.rps).toFixed(2)
      )
    }`,
    `- ${remoteService}, 1 conn., over the ${baseline} by round: p50 ${
      over(remoteService, "p50Ms")
    } ms (budget +${2 * LATENCY_MS + 3} ms), p99 ${over(remoteService, "p99Ms")} ms`,
    `- ${remoteDurable}, 1 conn., over the ${baseline} by round: p50 ${
      over(remoteDurable, "p50Ms")
    } ms`,
  ].join("\n");
}

// Every request carries a fresh idempotency key and rotates over the projects' keys.
function txLoad(url: string, keys: string[], run: string) {
  return (phase: string) => {
    let n = 0;
    const nextKey = roundRobin(keys);
    const body = (key: string) =>
      JSON.stringify({ to: { userId: 1 }, amount: AMOUNT, idempotencyKey: key });
    return {
      request: () => {
        const i = n++;
        return new Request(`${url}/v1/tx/transfer-sol`, {
          method: "POST",
          headers: { "x-api-key": nextKey(), "content-type": "application/json" },
          body: body(`${run}-${phase}-${i}`),
        });
      },
      wrkScript: `
local keys = {${keys.map((k) => `"${k}"`).join(",")}}
local threads = 0
setup = function(thread)
  threads = threads + 1
  thread:set("tid", threads)
end
local i = 0
request = function()
  i = i + 1
  local key = "${run}-${phase}-" .. tid .. "-" .. i
  local body = '{"to":{"userId":1},"amount":"${AMOUNT}","idempotencyKey":"' .. key .. '"}'
  return wrk.format("POST", "/v1/tx/transfer-sol", {
    ["x-api-key"] = keys[(i % #keys) + 1],
    ["content-type"] = "application/json",
  }, body)
end
`,
    };
  };
}

function announce(info: Record<string, unknown>) {
  return ({ port }: { port: number }) =>
    console.log(JSON.stringify({ url: `http://127.0.0.1:${port}`, ...info }));
}

/** The sandbox cluster alone, slots at the real 400 ms. */
export async function serveChain() {
  const { startChain } = await import("../sandbox/chain/mod.ts");
  const chain = await startChain({ slotMs: 400 });
  console.log(JSON.stringify({ rpcUrl: chain.rpcUrl }));
}

/** Funds `wallet` through the cluster's faucet (default 1,000 SOL) and waits until it is confirmed. */
export async function fund(
  rpcUrl: string,
  wallet: Address,
  lamports = 1_000_000_000_000n,
): Promise<void> {
  const rpc = createSolanaRpc(rpcUrl);
  await rpc.requestAirdrop(wallet, lamports as never).send();
  for (let i = 0; i < 100; i++) {
    const { value } = await rpc.getBalance(wallet, { commitment: "confirmed" }).send();
    if (value > 0n) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Cannot fund ${wallet}`);
}

/**
 * Baseline: per request, the chain work of a transfer and nothing else (no key, no store). With
 * `durable`, also the two commits no exactly-once payout can do without, one record each: the key
 * taken before the send (checked unused), the signature after it.
 */
async function serveBaseline(options: { durable: boolean }) {
  const rpcUrl = Deno.env.get("BENCH_RPC_URL")!;
  const rpc = createSolanaRpc(rpcUrl);
  const payer = await generateKeyPairSigner();
  const recipient = (await generateKeyPairSigner()).address;
  await fund(rpcUrl, payer.address);
  const remote = Deno.env.get("BENCH_KV_PATH");
  const kv = options.durable
    ? await Deno.openKv(remote ?? `${await benchKvDir()}/durable.kv`)
    : null;
  Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: announce({ keys: ["none"] }) },
    async (req) => {
      const { idempotencyKey } = await req.json();
      const key = ["payouts", idempotencyKey];
      if (kv) {
        const taken = await kv.atomic().check({ key, versionstamp: null })
          .set(key, { status: "pending" }).commit();
        if (!taken.ok) return Response.json({ error: "key used" }, { status: 409 });
      }
      const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
      // The payout's transaction: the transfer and the memo naming a unique attempt id.
      const signed = await signInstructions(payer, [
        getTransferSolInstruction({ source: payer, destination: recipient, amount: LAMPORTS }),
        memoInstruction(ulid()),
      ], latest);
      const signature = await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), {
        encoding: "base64",
        preflightCommitment: "confirmed",
        maxRetries: 0n,
      }).send();
      await kv?.set(key, { status: "submitted", signature });
      return Response.json({ status: "submitted", signature });
    },
  );
}

/**
 * A fresh directory for a bench server's store: on a tmpfs (`BENCH_KV_DIR=/dev/shm`) its syncs
 * cost nothing, so what they cost is the difference from a run on disk.
 */
async function benchKvDir(): Promise<string> {
  const under = Deno.env.get("BENCH_KV_DIR");
  return await Deno.makeTempDir(under ? { dir: under } : {});
}

/**
 * Service: the real app on a fresh KV file (or the store `BENCH_KV_PATH` names) with many projects,
 * each with a funded wallet.
 */
async function serveService() {
  const { createAppContext } = await import("../lib/context.ts");
  const { loadConfig } = await import("../lib/config.ts");
  const { createApp } = await import("../routes/mod.ts");
  const { openKv } = await import("../kv/open_kv.ts");
  const { linkWallet } = await import("../kv/links.ts");
  const { savePolicy } = await import("../lib/tx/request/policy.ts");
  const { createProjectWallet } = await import("../lib/projects/wallet.ts");
  const { createBenchProject, seedStore } = await import("./seed_store.ts");
  const { countCalls } = await import("./call_counts.ts");
  const rpcUrl = Deno.env.get("BENCH_RPC_URL")!;
  const dir = await benchKvDir();
  const kvPath = Deno.env.get("BENCH_KV_PATH") ?? `${dir}/bench.kv`;
  const config = loadConfig({
    SECRET: "bench-secret-bench-secret-bench-secret!!",
    PORT: "0",
    RPC_URL_DEVNET: rpcUrl,
    KV_PATH: kvPath,
    DENO_KV_ACCESS_TOKEN: Deno.env.get("DENO_KV_ACCESS_TOKEN"),
  }, { dataDir: dir });
  const player = (await generateKeyPairSigner()).address;
  const keys: string[] = [];
  const wallets: Address[] = [];
  // The driver reads the first stdout line as the start line: keep seeding's info logs quiet.
  const print = console.log;
  console.log = () => {};
  await seedStore(kvPath, async (kv) => {
    const ctx = await createAppContext({ kv, config });
    for (let i = 0; i < PROJECTS; i++) {
      const { project, apiKey } = await createBenchProject(kv, i);
      keys.push(apiKey);
      wallets.push(await createProjectWallet(ctx, project.id) as Address);
      await savePolicy(kv, project.id, { maxSolPerTransfer: "1" });
      await linkWallet(kv, project.id, { userId: 1, address: player, now: Date.now() });
    }
  });
  console.log = print;
  const kv = await openKv(kvPath);
  const counts = countCalls(kv, rpcUrl);
  const ctx = await createAppContext({ kv, config });
  // Answer `submitted` right after sending: the bench measures the service, not the cluster.
  ctx.tx.timing = { ...ctx.tx.timing, confirmWaitMs: 0 };
  for (let i = 0; i < wallets.length; i += 50) {
    await Promise.all(wallets.slice(i, i + 50).map((wallet) => fund(rpcUrl, wallet)));
  }
  const app = createApp(ctx);
  Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen: announce({ keys }) },
    (req) => new URL(req.url).pathname === "/bench/calls" ? Response.json(counts) : app.fetch(req),
  );
}

if (import.meta.main) {
  const role = Deno.env.get("BENCH_ROLE");
  if (role === "chain") await serveChain();
  else if (role === "baseline") await serveBaseline({ durable: false });
  else if (role === "durable") await serveBaseline({ durable: true });
  else if (role === "service") await serveService();
  else {
    const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 10);
    const results = await benchTx(seconds);
    console.log(`## POST /v1/tx/transfer-sol (submitted at once), ${PROJECTS} projects`);
    console.log(resultTable(results, results[1]));
    console.log(callTable(results));
    console.log(roundLines(results));
  }
}

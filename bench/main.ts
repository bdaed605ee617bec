/** `deno task bench`: every benchmark, each against a baseline measured in the same run. */
import { hasWrk, resultTable } from "./load.ts";
import { benchPlayerWallet } from "./player_wallet.ts";
import { benchCachedBalance } from "./chain_reads.ts";
import { benchTxBurst } from "./tx_burst.ts";
import { benchTxBatch } from "./tx_batch.ts";
import { benchTx, callTable, roundLines } from "./tx.ts";
import { benchEventFeed } from "./event_feed.ts";
import { benchBackground } from "./background.ts";
import { benchRemote } from "./remote.ts";
import { chaosSummary, runChaos } from "../tests/support/chaos.ts";
import { CHAOS_PROFILES } from "../tests/support/chaos_profiles.ts";
import { benchSdkServers } from "./sdk_servers.ts";

const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 10);
console.log(
  `# Blocklink benchmarks (${navigator.hardwareConcurrency} cores, ${seconds} s per run)`,
);
console.log(
  `Load generator: ${
    (await hasWrk()) ? "wrk (Debian)" : "Deno fetch loop (install wrk for better numbers)"
  }\n`,
);

console.log("## GET /v1/players/:userId/wallet, 64 connections, 1,000 projects");
const wallet = await benchPlayerWallet(seconds);
const kvBaseline = wallet.find((r) => r.name === "KV-read baseline");
console.log(resultTable(wallet, kvBaseline));
console.log();

console.log(
  "## The same on a remote store (KV Connect test server, 10 ms per round trip), 100 projects",
);
const remote = await benchRemote(seconds);
console.log(resultTable(remote, remote[0]));
const [remoteBaseline, , remoteOne, remotePair] = remote;
if (!remoteBaseline || !remoteOne || !remotePair) throw new Error("Missing a remote-store run");
console.log(
  `p50 counted minus baseline: ${(remoteOne.p50Ms - remoteBaseline.p50Ms).toFixed(2)} ms; ` +
    `two instances against one: ${(remotePair.rps / remoteOne.rps).toFixed(2)}`,
);
console.log();

console.log("## GET /v1/wallets/:address/balance (cached), 64 connections, 1,000 projects");
const balance = await benchCachedBalance(seconds);
console.log(resultTable(balance, balance[0]));
console.log();

console.log("## POST /v1/tx/transfer-sol: the service's own overhead per request");
const tx = await benchTx(seconds);
console.log(resultTable(tx, tx[1]));
console.log(callTable(tx));
console.log(roundLines(tx));
console.log();

console.log("## A round end: 500 payouts of one project within one second, two instances");
console.log(await benchTxBurst("file"));
console.log(await benchTxBurst("remote"));
console.log();

console.log("## POST /v1/tx/batch: 50 payouts in one request against 50 single requests");
console.log(await benchTxBatch());
console.log();

console.log(
  "## Recording events: 300 commits of one project in flight, two instances on one KV file",
);
const feed = await benchEventFeed(seconds);
console.log(resultTable(feed, feed[0]));
console.log();

console.log(
  "## Background work: publish retry waits, and confirmation beside 20 flooded watches and a backlog",
);
console.log(await benchBackground(seconds));
console.log();

// Minutes long and one process per game server: only when asked (or alone: `deno task bench:sdk`).
const sdkServers = Number(Deno.env.get("BENCH_SDK_SERVERS") ?? 0);
if (sdkServers > 0) {
  console.log("## The Luau SDK at a game's scale (BENCH_SDK_SERVERS Lune processes)");
  console.log(
    await benchSdkServers({
      servers: sdkServers,
      seconds: Number(Deno.env.get("BENCH_SDK_SECONDS") ?? 180),
      drop: Number(Deno.env.get("BENCH_SDK_DROP") ?? 0.05),
    }),
  );
}

// One round of every fault profile by default: a correctness run, with answer times.
const chaosRounds = Number(Deno.env.get("BENCH_CHAOS_ROUNDS") ?? CHAOS_PROFILES.length);
const chaosSeed = Number(Deno.env.get("BENCH_CHAOS_SEED") ?? 1);
console.log(`## The money path under SIGKILL and RPC faults: ${chaosRounds} chaos rounds`);
const chaosStarted = performance.now();
const chaos = await runChaos({ rounds: chaosRounds, seed: chaosSeed });
console.log(chaosSummary(chaos, (performance.now() - chaosStarted) / 60_000));
console.log();

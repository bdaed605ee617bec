/**
 * Bench: background work on time, for everyone (issue 11, item 5).
 *
 * 1. Publish retry waits: the messaging stand-in refuses three attempts (HTTP 500), and the
 *    waits between attempts are measured against the nominal 0.5, 1 and 2 s.
 * 2. One project floods: its 20 watches are on addresses that each receive `BENCH_FLOOD_TX`
 *    (default 1,000) transactions every 3 s (each transaction pays all 20). Meanwhile another
 *    project sends transfers answered `submitted` (no wait in the route), and the bench measures
 *    how long after landing on the chain (confirmed commitment) the service records each as
 *    `confirmed`, and how long after that its `tx` event reaches the messaging stand-in. The
 *    baseline is the same transfers without the flood.
 * 3. A backlog (issue 22, item 1): the flooding project (another developer's) has 50,000
 *    deliveries due, queued before the transfers, and the same transfers are measured again.
 *
 * The cluster and the flood generator run in their own processes; the service (`startService`,
 * real worker defaults, real clock) and the stand-in run in this one.
 * `deno run -A --unstable-kv --unstable-cron bench/background.ts` runs the bench alone.
 */
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  type Signature,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { signInstructions } from "../sandbox/chain/fixtures.ts";
import { startServer } from "./load.ts";
import { fund, serveChain } from "./tx.ts";

const FLOOD_TX = Number(Deno.env.get("BENCH_FLOOD_TX") ?? 1_000);
const FLOOD_EVERY_MS = 3_000;
const WATCHES = 20;
const UNIVERSE = "4242";
const PUBLISH_KEY = "bench-publishing-key-0123456789";

interface Sample {
  confirmMs: number;
  eventMs: number;
}

/** Runs both parts; returns Markdown. */
export async function benchBackground(seconds: number): Promise<string> {
  // The service's one-line-per-event logs would bury the tables.
  const quiet = { log: console.log, error: console.error };
  console.log = console.error = () => {};
  try {
    return await runBench(seconds);
  } finally {
    Object.assign(console, quiet);
  }
}

async function runBench(seconds: number): Promise<string> {
  const self = new URL(import.meta.url).pathname;
  const chain = await startServer(self, { BENCH_ROLE: "chain" });
  const rpcUrl = String(chain.info.rpcUrl);
  const env = await startEnvironment(rpcUrl);
  const lines: string[] = [];
  try {
    const waits = await measureRetryWaits(env, 5);
    lines.push(
      "| wait | nominal ms | p50 ms | p99 ms | ratio p50 to nominal |",
      "|---|---|---|---|---|",
    );
    for (const [i, nominal] of [500, 1_000, 2_000].entries()) {
      const list = waits.flatMap((w) => w[i] ?? []);
      lines.push(
        `| ${i + 1} | ${nominal} | ${pct(list, 50)} | ${pct(list, 99)} | ${
          (pct(list, 50) / nominal).toFixed(2)
        } |`,
      );
    }
    lines.push("");
    const transfers = Math.max(5, Math.round(seconds / 2));
    const baseline = await measureTransfers(env, transfers);
    const floodLog = await Deno.makeTempFile();
    const flood = await startServer(self, {
      BENCH_ROLE: "flood",
      BENCH_RPC_URL: rpcUrl,
      BENCH_ADDRESSES: env.watched.join(","),
      BENCH_FLOOD_LOG: floodLog,
    });
    let flooded: Sample[];
    let floodStarted = 0;
    try {
      // Let the polls find the first rounds before measuring.
      await new Promise((r) => setTimeout(r, 2 * FLOOD_EVERY_MS));
      floodStarted = Date.now();
      flooded = await measureTransfers(env, transfers);
    } finally {
      await flood.stop();
    }
    const rounds = (await Deno.readTextFile(floodLog)).trim().split("\n").map((l) => JSON.parse(l))
      .filter((r: { at: number }) => r.at >= floodStarted);
    const sent = rounds.reduce((n: number, r: { sent: number }) => n + r.sent, 0);
    lines.push(
      `Flood while measuring: ${sent} transactions in ${rounds.length} rounds ` +
        `(${
          (sent / ((Date.now() - floodStarted) / 1_000)).toFixed(0)
        } a second), each paying all ` +
        `${WATCHES} watched addresses; the flooding project's watch events are capped at 1,000 a minute.`,
      "",
    );
    const { samples: backlogged, delivered } = await measureBehindBacklog(env, transfers);
    lines.push(
      `Backlog: ${BACKLOG.toLocaleString("en")} deliveries of the flooding project due at once, ` +
        `${delivered.toLocaleString("en")} of them delivered while the transfers were measured.`,
      "",
    );
    lines.push(
      "| run | transfers | confirmed after landing p50 / p99 / max ms | tx event after confirmed p50 / p99 / max ms | ratio p99 to baseline | over 5 s |",
      "|---|---|---|---|---|---|",
    );
    for (
      const [name, samples] of [
        ["baseline (no flood)", baseline],
        ["20 flooded watches", flooded],
        [`${BACKLOG.toLocaleString("en")} deliveries of another project due`, backlogged],
      ] as const
    ) {
      const confirm = samples.map((s) => s.confirmMs);
      const event = samples.map((s) => s.eventMs);
      lines.push(
        `| ${name} | ${samples.length} | ${pct(confirm, 50)} / ${pct(confirm, 99)} / ${
          Math.max(...confirm)
        } | ${pct(event, 50)} / ${pct(event, 99)} / ${Math.max(...event)} | ${
          (pct(confirm, 99) / Math.max(1, pct(baseline.map((s) => s.confirmMs), 99))).toFixed(2)
        } | ${samples.filter((s) => s.confirmMs > 5_000 || s.eventMs > 5_000).length} |`,
      );
    }
  } finally {
    await env.close();
    await chain.stop();
  }
  return lines.join("\n");
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

type Environment = Awaited<ReturnType<typeof startEnvironment>>;

/** The service, the stand-in, a flooding project with 20 watches and a paying project. */
async function startEnvironment(rpcUrl: string) {
  const { startMessagingStandIn } = await import("../sandbox/roblox/mod.ts");
  const { loadConfig } = await import("../lib/config.ts");
  const { openKv } = await import("../kv/open_kv.ts");
  const { startService } = await import("../service.ts");
  const { createProject } = await import("../kv/projects.ts");
  const { createApiKey } = await import("../kv/api_keys.ts");
  const { savePolicy } = await import("../lib/tx/request/policy.ts");
  const { saveEventSettings } = await import("../lib/events/settings.ts");
  const { addWatch } = await import("../lib/watches/watches.ts");
  const { createProjectWallet } = await import("../lib/projects/wallet.ts");
  const { getTxRequest } = await import("../kv/tx_requests.ts");
  const standIn = await startMessagingStandIn({
    keys: [{ apiKey: PUBLISH_KEY, universeId: UNIVERSE }],
  });
  const dir = await Deno.makeTempDir();
  const kv = await openKv(`${dir}/bench.kv`);
  const config = loadConfig({
    SECRET: "bench-secret-bench-secret-bench-secret!!",
    PORT: "0",
    RPC_URL_DEVNET: rpcUrl,
    PUBLISH_URL: standIn.url,
  }, { dataDir: dir });
  const service = await startService({ kv, config, hostname: "127.0.0.1" });
  const { ctx } = service;
  // Answer `submitted` right after sending, so confirmation is the background check's work.
  ctx.tx.timing = { ...ctx.tx.timing, confirmWaitMs: 0 };
  const project = async (name: string) => {
    const created = await createProject(kv, {
      name,
      cluster: "devnet",
      createdBy: name,
      now: Date.now(),
    });
    await saveEventSettings(ctx, created.id, { universeId: UNIVERSE, publishingKey: PUBLISH_KEY });
    return created;
  };
  const flooding = await project("flooding");
  const watched: Address[] = [];
  for (let i = 0; i < WATCHES; i++) {
    const address = (await generateKeyPairSigner()).address;
    watched.push(address);
    await fund(rpcUrl, address, 1_000_000_000n);
    await addWatch(ctx, flooding.id, { name: `w${i}`, address });
  }
  const paying = await project("paying");
  const apiKey = (await createApiKey(kv, paying.id, Date.now())).plaintext;
  await savePolicy(kv, paying.id, { maxSolPerTransfer: "1" });
  await fund(rpcUrl, await createProjectWallet(ctx, paying.id) as Address, 100_000_000_000n);
  const url = `http://127.0.0.1:${service.server.addr.port}`;
  return {
    rpc: createSolanaRpc(rpcUrl),
    ctx,
    standIn,
    floodingId: flooding.id,
    watched,
    url,
    apiKey,
    status: async (key: string) => (await getTxRequest(kv, paying.id, key))?.status,
    close: async () => {
      await service.close();
      kv.close();
      await standIn.close();
    },
  };
}

const BACKLOG = 50_000;

/**
 * Queues `BACKLOG` deliveries of the flooding project, all due now, then measures transfers;
 * `delivered` is how many of the backlog reached the stand-in meanwhile.
 */
async function measureBehindBacklog(
  env: Environment,
  count: number,
): Promise<{ samples: Sample[]; delivered: number }> {
  const { addEventJob } = await import("../lib/events/job_payloads.ts");
  const now = Date.now();
  for (let first = 0; first < BACKLOG; first += 300) {
    const op = env.ctx.kv.atomic();
    for (let i = first; i < Math.min(BACKLOG, first + 300); i++) {
      const event = { type: "ping" as const, at: i, id: String(i + 1), createdAt: now };
      addEventJob(op, { type: "deliver_event", projectId: env.floodingId, event }, { runAt: now });
    }
    await op.commit();
  }
  const pings = () =>
    env.standIn.inbox().filter((m) => (m.data as { type?: string }).type === "ping").length;
  const before = pings();
  env.ctx.jobWaker.wake();
  const samples = await measureTransfers(env, count);
  return { samples, delivered: pings() - before };
}

/** Publishes `count` pings, each refused three times; returns the three waits of each. */
async function measureRetryWaits(env: Environment, count: number): Promise<number[][]> {
  const { recordEvents } = await import("../lib/events/record.ts");
  const waits: number[][] = [];
  for (let i = 0; i < count; i++) {
    env.standIn.clearAttempts();
    env.standIn.clearInbox();
    env.standIn.failNext("500", { count: 3 });
    await recordEvents(env.ctx, env.floodingId, [{ type: "ping", at: i }]);
    await env.standIn.waitForMessages(1, 30_000);
    const at = env.standIn.attempts().map((a) => a.at);
    waits.push(at.slice(1).map((t, j) => t - (at[j] ?? t)));
  }
  return waits;
}

/** Sends `count` transfers one after another; measures each one's confirmation and event. */
async function measureTransfers(env: Environment, count: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (let i = 0; i < count; i++) {
    const key = `bench-${Date.now()}-${i}`;
    const to = (await generateKeyPairSigner()).address;
    const answer = await fetch(`${env.url}/v1/tx/transfer-sol`, {
      method: "POST",
      headers: { "x-api-key": env.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ to: { address: to }, amount: "0.001", idempotencyKey: key }),
    });
    const body = await answer.json() as { signature?: string; status?: string };
    if (!body.signature) throw new Error(`Cannot send a bench transfer: ${JSON.stringify(body)}`);
    const [landedAt, confirmedAt] = await Promise.all([
      waitFor(async () => {
        const { value } = await env.rpc.getSignatureStatuses([body.signature as Signature]).send();
        return value[0]?.confirmationStatus === "confirmed" ||
          value[0]?.confirmationStatus === "finalized";
      }),
      waitFor(async () => (await env.status(key)) === "confirmed"),
    ]);
    const deliveredAt = await waitFor(() =>
      Promise.resolve(env.standIn.inbox().some((m) => (m.data as { key?: string }).key === key))
    );
    samples.push({
      confirmMs: Math.max(0, confirmedAt - landedAt),
      eventMs: Math.max(0, deliveredAt - confirmedAt),
    });
    await new Promise((r) => setTimeout(r, 500));
  }
  return samples;
}

// How long a sample may wait; one that takes longer is counted at this and reported.
const GIVE_UP_MS = 60_000;

/** Polls every 20 ms; returns the time `check` first held (at most `GIVE_UP_MS` from now). */
async function waitFor(check: () => Promise<boolean>): Promise<number> {
  const deadline = Date.now() + GIVE_UP_MS;
  while (Date.now() < deadline) {
    if (await check()) return Date.now();
    await new Promise((r) => setTimeout(r, 20));
  }
  return deadline;
}

/** The flood: every 3 s, `FLOOD_TX` transactions each paying every watched address. */
async function serveFlood() {
  const rpcUrl = Deno.env.get("BENCH_RPC_URL")!;
  const addresses = Deno.env.get("BENCH_ADDRESSES")!.split(",") as Address[];
  const rpc = createSolanaRpc(rpcUrl);
  const payer = await generateKeyPairSigner();
  await fund(rpcUrl, payer.address, 10_000_000_000_000n);
  console.log(JSON.stringify({ ready: true }));
  for (let round = 0;; round++) {
    const started = Date.now();
    const { value: latest } = await rpc.getLatestBlockhash({ commitment: "confirmed" }).send();
    let next = 0;
    const sender = async () => {
      while (next < FLOOD_TX) {
        const i = next++;
        const transfers = addresses.map((destination) =>
          getTransferSolInstruction({
            source: payer,
            destination,
            // Distinct amounts keep every transaction unique.
            amount: BigInt(1_000 + round * FLOOD_TX + i),
          })
        );
        const signed = await signInstructions(payer, transfers, latest);
        await rpc.sendTransaction(getBase64EncodedWireTransaction(signed), {
          encoding: "base64",
          skipPreflight: true,
        }).send().catch(() => {});
      }
    };
    await Promise.all(Array.from({ length: 16 }, sender));
    const line = JSON.stringify({ at: Date.now(), sent: FLOOD_TX, ms: Date.now() - started });
    await Deno.writeTextFile(Deno.env.get("BENCH_FLOOD_LOG")!, line + "\n", { append: true });
    await new Promise((r) => setTimeout(r, Math.max(0, FLOOD_EVERY_MS - (Date.now() - started))));
  }
}

if (import.meta.main) {
  const role = Deno.env.get("BENCH_ROLE");
  if (role === "chain") await serveChain();
  else if (role === "flood") await serveFlood();
  else {
    const seconds = Number(Deno.env.get("BENCH_SECONDS") ?? 10);
    console.log(
      `## Background work: retry waits, and confirmation beside ${WATCHES} flooded watches and a backlog`,
    );
    console.log(await benchBackground(seconds));
    Deno.exit(0);
  }
}

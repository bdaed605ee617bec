/**
 * The Luau SDK at a game's scale: `BENCH_SDK_SERVERS` game servers (50 by default), each its own
 * Lune process running the SDK with its default options (bench/sdk_server.luau), against the real
 * service for `BENCH_SDK_SECONDS` (180), all started at once (a restart of every server). Payouts
 * and test pings are made throughout but the last `TAIL_S` seconds; the messaging stand-in takes at
 * most 80 publishes a minute on the topic (Roblox's limit: a round end where every server pays at
 * once is throttled, and the service drops what stays refused), loses `BENCH_SDK_DROP` (5 %) of
 * deliveries on each server, and every `LOSE_EVERY_S` seconds answers 500 to the next four
 * publishes.
 *
 * Reported: counted requests per server per minute (all, and those not made by the game's payouts)
 * with the figure for 1,000 servers; feed reads (not counted); event latency p50/p95 from the
 * event's commit to the handler, by the path that brought it (message or feed); events handed to a
 * handler twice; events missed (recorded after the server subscribed, never handed over); payouts
 * refused; and the machine's load, since every process shares its cores.
 *
 *   deno task bench:sdk          (or part of `deno task bench` when BENCH_SDK_SERVERS is set)
 */
import { base58 } from "@scure/base";
import { luauTools, type LuauWorld, startLuauWorld } from "../tests/support/luau_world.ts";
import { processCpuSeconds } from "./load.ts";

const TAIL_S = 50;
const LOSE_EVERY_S = 15;
const PING_EVERY_S = 10;
const PAY_EVERY_S = 45;

interface ServerReport {
  server: string;
  subscribedAt: number;
  handled: Array<[string, "message" | "feed", number]>;
  payouts: { sent: number; refused: number; failed: number; codes: Record<string, number> };
  requests: Record<string, number>;
}

/** Runs the bench; returns its report as Markdown. */
export async function benchSdkServers(
  options: { servers: number; seconds: number; drop: number },
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "blocklink_sdk_bench_" });
  const rbxm = `${dir}/Blocklink.rbxm`;
  const built = await luauTools(["lune", "run", "sdk/luau/build.luau", rbxm]);
  if (built.code !== 0) throw new Error(`Cannot build the SDK model:\n${built.output}`);
  await using world = await startLuauWorld({ topicLimitPerMinute: 80 });
  try {
    const payouts = Math.ceil((options.seconds - TAIL_S) / PAY_EVERY_S) * 2 + 3;
    // The round end, when every server pays at once: halfway through the active part.
    const burstAt = Date.now() + (options.seconds - TAIL_S) / 2 * 1_000;
    const children = Array.from({ length: options.servers }, (_, i) => {
      const recipients = Array.from(
        { length: payouts },
        () => base58.encode(crypto.getRandomValues(new Uint8Array(32))),
      );
      return new Deno.Command("sh", {
        args: ["scripts/luau_tools.sh", "lune", "run", "bench/sdk_server.luau"],
        env: {
          BLOCKLINK_WORLD: JSON.stringify(world.info),
          BLOCKLINK_RBXM: rbxm,
          SECRET_blocklink: world.apiKey,
          BENCH_SERVER: `s${i + 1}`,
          BENCH_SECONDS: String(options.seconds),
          BENCH_PAY_SECONDS: String(options.seconds - TAIL_S),
          BENCH_PAY_EVERY: String(PAY_EVERY_S),
          BENCH_DROP: String(options.drop),
          BENCH_RECIPIENTS: JSON.stringify(recipients),
          BENCH_BURST_AT: String(burstAt),
        },
        stdout: "piped",
        stderr: "piped",
      }).spawn();
    });
    const started = performance.now();
    const load: number[] = [];
    const activity = [
      setInterval(() => world.standIn.failNext("500", { count: 4 }), LOSE_EVERY_S * 1_000),
      setInterval(() => control(world, "ping"), PING_EVERY_S * 1_000),
    ];
    // The quiet tail: the last events have the time a lost message needs to come from the feed.
    const quiet = setTimeout(() => {
      for (const timer of activity) clearInterval(timer);
      world.standIn.clearFailures();
    }, (options.seconds - TAIL_S) * 1_000);
    const timers = [...activity, setInterval(() => load.push(Deno.loadavg()[0] ?? NaN), 5_000)];
    // CPU time of the servers, read just before they end.
    let luneCpu = 0;
    const cpuTimer = setTimeout(() => {
      for (const child of children) luneCpu += processCpuSeconds(child.pid) || 0;
    }, (options.seconds - 2) * 1_000);
    const outputs = await Promise.all(children.map((child) => child.output()));
    for (const timer of timers) clearInterval(timer);
    clearTimeout(cpuTimer);
    clearTimeout(quiet);
    const elapsed = (performance.now() - started) / 1_000;
    const reports = outputs.map((output, i) => {
      const text = new TextDecoder().decode(output.stdout).trim().split("\n").at(-1) ?? "";
      try {
        return JSON.parse(text) as ServerReport;
      } catch {
        throw new Error(
          `Server s${i + 1} ended without its report:\n${text}\n` +
            new TextDecoder().decode(output.stderr),
        );
      }
    });
    const feed = await readFeed(world);
    const counted = (await control(world, "requests", "GET") as Array<{ path: string }>)
      .filter((request) => !request.path.startsWith("/v1/events")).length;
    return report({ options, reports, feed, elapsed, load, luneCpu, counted, world });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Every event of the bench's project: id to its commit time (the service's clock). */
async function readFeed(world: LuauWorld): Promise<Map<string, number>> {
  const created = new Map<string, number>();
  let after = "0";
  for (;;) {
    const res = await fetch(`${world.info.baseUrl}/v1/events?after=${after}&limit=500`, {
      headers: { "x-api-key": world.apiKey },
    });
    const page = await res.json() as {
      events: Array<{ id: string; createdAt: number }>;
      next: string;
    };
    for (const event of page.events) created.set(event.id, event.createdAt);
    if (page.events.length < 500) return created;
    after = page.next;
  }
}

async function control(world: LuauWorld, name: string, method = "POST"): Promise<unknown> {
  const res = await fetch(`${world.info.baseUrl}/_test/${name}`, { method });
  return await res.json();
}

function report(run: {
  options: { servers: number; seconds: number; drop: number };
  reports: ServerReport[];
  feed: Map<string, number>;
  elapsed: number;
  load: number[];
  luneCpu: number;
  counted: number;
  world: LuauWorld;
}): string {
  const { options, reports, feed } = run;
  // Servers report wall-clock times; the service's clock follows real time from its own start.
  const offset = run.world.serviceNow() - Date.now();
  const latencies = { message: [] as number[], feed: [] as number[] };
  let twice = 0;
  let missed = 0;
  let expected = 0;
  let extra = 0;
  for (const server of reports) {
    const since = server.subscribedAt + offset;
    const seen = new Map<string, number>();
    for (const [id, path, at] of server.handled) {
      seen.set(id, (seen.get(id) ?? 0) + 1);
      const createdAt = feed.get(id);
      if (createdAt === undefined || createdAt < since) {
        extra++;
        continue;
      }
      latencies[path].push(at + offset - createdAt);
    }
    for (const count of seen.values()) twice += count - 1;
    for (const [id, createdAt] of feed) {
      if (createdAt < since) continue;
      expected++;
      if (!seen.has(id)) missed++;
    }
  }
  const minutes = run.elapsed / 60;
  const perServerMinute = (n: number) => n / options.servers / minutes;
  const sum = (pick: (r: ServerReport) => number) => reports.reduce((n, r) => n + pick(r), 0);
  const calls = (prefix: string) =>
    sum((r) =>
      Object.entries(r.requests).filter(([family]) => family.startsWith(prefix))
        .reduce((n, [, count]) => n + count, 0)
    );
  const feedReads = calls("GET /v1/events");
  const payoutCalls = calls("POST /v1/tx") + calls("GET /v1/tx");
  const countedBySdk = sum((r) => Object.values(r.requests).reduce((n, c) => n + c, 0)) -
    feedReads;
  const sync = countedBySdk - payoutCalls;
  const refused = sum((r) => r.payouts.refused);
  const codes: Record<string, number> = {};
  for (const r of reports) {
    for (const [code, n] of Object.entries(r.payouts.codes)) codes[code] = (codes[code] ?? 0) + n;
  }
  const row = (name: string, values: number[]) => {
    const sorted = values.toSorted((a, b) => a - b);
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
    return `| ${name} | ${values.length} | ${fmt(at(0.5))} | ${fmt(at(0.95))} | ${
      fmt(sorted.at(-1))
    } |`;
  };
  const meanLoad = run.load.reduce((a, b) => a + b, 0) / Math.max(run.load.length, 1);
  return [
    `${options.servers} servers (Lune processes) for ${
      run.elapsed.toFixed(0)
    } s, default options, ` +
    `${
      (options.drop * 100).toFixed(0)
    } % of deliveries lost per server, 80 publishes a minute on ` +
    `the topic, 500 to the next four publishes every ${LOSE_EVERY_S} s, a payout per server ` +
    `about every ${PAY_EVERY_S} s and one from every server at once halfway (a round end), a ` +
    `test ping every ${PING_EVERY_S} s, until ${TAIL_S} s before the end.`,
    "",
    "| Requests | Total | Per server per minute | For 1,000 servers, per minute |",
    "| --- | --- | --- | --- |",
    `| Counted, to stay in sync (all but the payouts and their status asks) | ${sync} | ${
      fmt(perServerMinute(sync))
    } | ${fmt(perServerMinute(sync) * 1_000)} |`,
    `| Counted, all (payouts and waitForTx included; the service saw ${run.counted}) | ${countedBySdk} | ${
      fmt(perServerMinute(countedBySdk))
    } | ${fmt(perServerMinute(countedBySdk) * 1_000)} |`,
    `| Feed reads (not counted) | ${feedReads} | ${fmt(perServerMinute(feedReads))} | ${
      fmt(perServerMinute(feedReads) * 1_000)
    } |`,
    "",
    "| Event latency, commit to handler (ms) | Handed over | p50 | p95 | max |",
    "| --- | --- | --- | --- | --- |",
    row("by MessagingService", latencies.message),
    row("by the feed", latencies.feed),
    row("all", [...latencies.message, ...latencies.feed]),
    "",
    `Events recorded: ${feed.size}; expected across servers (recorded after each one subscribed): ` +
    `${expected}; missed: ${missed}; handed to a handler twice: ${twice}; handed over from before ` +
    `a server subscribed (its look back): ${extra}.`,
    `Payouts: ${sum((r) => r.payouts.sent)} sent, ${refused} refused${
      refused ? ` (${JSON.stringify(codes)})` : ""
    }, ${sum((r) => r.payouts.failed)} failed on chain.`,
    `Machine: ${navigator.hardwareConcurrency} cores, load average ${
      meanLoad.toFixed(1)
    } (mean of the run); the ${options.servers} Lune processes used ${
      run.luneCpu.toFixed(1)
    } CPU seconds in all.`,
  ].join("\n");
}

function fmt(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return "n/a";
  return value >= 100 ? value.toFixed(0) : value.toFixed(2);
}

if (import.meta.main) {
  const servers = Number(Deno.env.get("BENCH_SDK_SERVERS") ?? 50);
  const seconds = Number(Deno.env.get("BENCH_SDK_SECONDS") ?? 180);
  const drop = Number(Deno.env.get("BENCH_SDK_DROP") ?? 0.05);
  console.log(`## The Luau SDK at a game's scale\n`);
  console.log(await benchSdkServers({ servers, seconds, drop }));
}

/**
 * A day in the life of a popular game (issue 38), at its real rates for `BENCH_GAME_SECONDS` (600):
 * `BENCH_GAME_SERVERS` game servers (1,000) in `BENCH_GAME_PROCESSES` Lune processes (20), each
 * server the SDK with its default options (bench/game_servers.luau), against the real service, the
 * messaging stand-in (80 publishes a minute on the topic; each server loses `BENCH_GAME_DROP`, 5 %,
 * of the messages at random; the project packs its events and caps its messages at 80 a minute)
 * and the game's MemoryStoreService
 * stand-in with the budgets of 30,000 concurrent users.
 *
 * The modeled game: 30,000 concurrent players in 20-minute sessions (25 joins a second), 150,000
 * distinct players a day of whom 60 % also played on earlier days, 10 % linked. So about one join
 * in 37 is a player the universe has not seen within the directory's 3 days (40 % of the day's
 * 150,000 first joins among its 2.2 million joins); the others are players it knows: the 30,000
 * playing when the run starts and 60,000 more who played on earlier days, whose records the
 * directory holds at the start (seeded, as earlier days left them). Each join goes to a random
 * server, which calls `getPlayerWallet` as the example does on PlayerAdded.
 *
 * Link changes at about 10 a minute go through the real linking flow (two links for every
 * unlink); each is followed by joins of that player on random servers 15 s and 30 s later, which
 * must see the new state (any other answer is stale). A round end every 180 s pays a batch of two
 * rewards (about 1,000 transactions a day). At `SHUTDOWN_AT` of the run every server restarts (a
 * soft shutdown) and every playing player rejoins within 2 minutes, on top of the usual joins.
 *
 * Reported: counted requests (every /v1 request but the feed's) by minute, the largest minute and
 * the projected day; join-to-wallet latency p50/p95; stale answers; joins answered by an error;
 * payouts refused; MemoryStore request units by minute and memory against the game's budgets; the
 * messages the topic carried by minute against its 80; and the machine's load.
 *
 *   deno task bench:game     (BENCH_GAME_RBXM: run another SDK model, such as an older release)
 */
import { base58 } from "@scure/base";
import { luauTools, type LuauWorld, startLuauWorld } from "../tests/support/luau_world.ts";

const USERS = 30_000;
const SESSION_S = 20 * 60;
const JOINS_PER_S = USERS / SESSION_S;
/** Joins of players the directory has no record of: 40 % of 150,000 first joins in 2.2 million. */
const NEW_PLAYER_SHARE = 150_000 * 0.4 / 2_200_000;
const KNOWN_PLAYERS = 90_000;
const LINKED_SHARE = 0.1;
const LINK_CHANGES_PER_MIN = 10;
const CHECK_AFTER_S = [15, 30];
const ROUND_EVERY_S = 180;
const SHUTDOWN_AT = 0.5;
const REJOIN_S = 120;
const ENTRY_S = 3 * 86_400;
const FIRST_USER = 1_000_001;
/** Players whose wallet changes during the run: known to the directory (no wallet), apart from the rest. */
const FIRST_CHANGER = FIRST_USER + 2_000_000;
const CHANGERS = 1_000;

interface Command {
  id: number;
  kind: "join" | "pay" | "restart" | "stop";
  server?: number;
  userId?: number;
  items?: unknown[];
}

interface Result {
  id: number;
  ok?: boolean;
  address?: string | null;
  code?: string;
  ms?: number;
  paid?: number;
  refused?: number;
  codes?: string[];
}

/** What a join must answer: the address, or null for no wallet; undefined when not checked. */
interface Sent {
  at: number;
  kind: Command["kind"];
  expect?: string | null | undefined;
}

/** Runs the bench; returns its report as Markdown. */
export async function benchGameDay(
  options: {
    servers: number;
    processes: number;
    seconds: number;
    drop: number;
    rbxm?: string | undefined;
  },
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "blocklink_game_bench_" });
  const rbxm = options.rbxm ?? `${dir}/Blocklink.rbxm`;
  if (!options.rbxm) {
    const built = await luauTools(["lune", "run", "sdk/luau/build.luau", rbxm]);
    if (built.code !== 0) throw new Error(`Cannot build the SDK model:\n${built.output}`);
  }
  // The project packs its events and holds its publishes to the topic's 80 a minute, as the README
  // advises a game of this size.
  await using world = await startLuauWorld({
    topicLimitPerMinute: 80,
    users: USERS,
    events: { packEvents: true, messagesPerMinute: 80 },
  });
  try {
    seedDirectory(world);
    const perProcess = Math.ceil(options.servers / options.processes);
    const queues = Array.from({ length: options.processes }, () => [] as Command[]);
    const sent = new Map<number, Sent>();
    const results: Result[] = [];
    const ready = new Set<string>();
    const done: Array<{ requests: Record<string, number>; refused: number }> = [];
    let nextId = 1;

    const send = (process: number, command: Omit<Command, "id">, expect?: string | null) => {
      const id = nextId++;
      queues[process]!.push({ id, ...command });
      sent.set(id, { at: performance.now(), kind: command.kind, expect });
    };
    /** A join of `userId` on a random server of the game. */
    const join = (userId: number, expect?: string | null) => {
      const server = Math.floor(Math.random() * options.servers);
      send(Math.floor(server / perProcess), {
        kind: "join",
        server: server % perProcess + 1,
        userId,
      }, expect);
    };

    const commands = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        const url = new URL(req.url);
        const process = url.searchParams.get("p") ?? "";
        if (req.method === "GET") {
          const queue = queues[Number(process)]!;
          for (let waited = 0; queue.length === 0 && waited < 1_000; waited += 50) await sleep(50);
          return Response.json(queue.splice(0));
        }
        const body = await req.json();
        if (url.pathname === "/ready") ready.add(process);
        // An empty Luau table encodes as {}, not [].
        if (url.pathname === "/results" && Array.isArray(body)) results.push(...body);
        if (url.pathname === "/done") done.push(body);
        return Response.json({});
      },
    );
    const children = Array.from({ length: options.processes }, (_, i) =>
      new Deno.Command("sh", {
        args: ["scripts/luau_tools.sh", "lune", "run", "bench/game_servers.luau"],
        env: {
          BLOCKLINK_WORLD: JSON.stringify(world.info),
          BLOCKLINK_RBXM: rbxm,
          SECRET_blocklink: world.apiKey,
          BENCH_PROCESS: String(i),
          BENCH_SERVERS: String(Math.min(perProcess, options.servers - i * perProcess)),
          BENCH_COMMANDS: `http://127.0.0.1:${commands.addr.port}`,
          BENCH_DROP: String(options.drop),
        },
        stdout: "piped",
        stderr: "piped",
      }).spawn());
    const outputs = children.map((child) => child.output());
    const startedLoading = performance.now();
    while (ready.size < options.processes) {
      await sleep(500);
      if (performance.now() - startedLoading > 900_000) throw new Error("Servers did not start");
    }
    const loadSeconds = (performance.now() - startedLoading) / 1_000;
    await control(world, "requests", "DELETE");
    const unitsBefore = world.memoryStore.usage().unitsByMinute.length;
    const messagesBefore = world.messages().length;

    // The run: joins, link changes, round ends and the soft shutdown, at their rates.
    const started = performance.now();
    const playing = Array.from({ length: USERS }, (_, i) => FIRST_USER + i);
    let newPlayer = FIRST_USER + KNOWN_PLAYERS;
    const linkedDuringRun: Array<{ userId: number; at: number }> = [];
    let changer = FIRST_CHANGER;
    let changes = 0;
    let rounds = 0;
    const load: number[] = [];
    const timers = [
      setInterval(() => {
        // Joins of the last tick: a leaving player's place taken by a joining one.
        for (let i = 0; i < JOINS_PER_S / 10; i++) {
          const userId = Math.random() < NEW_PLAYER_SHARE
            ? newPlayer++
            : FIRST_USER + Math.floor(Math.random() * KNOWN_PLAYERS);
          playing[Math.floor(Math.random() * playing.length)] = userId;
          join(userId);
        }
      }, 100),
      setInterval(async () => {
        changes++;
        // A wallet linked during the run is unlinked only after both its checks.
        const oldest = linkedDuringRun[0];
        const unlink = changes % 3 === 0 && oldest !== undefined &&
          performance.now() - oldest.at > (CHECK_AFTER_S.at(-1)! + 5) * 1_000;
        const userId = unlink ? linkedDuringRun.shift()!.userId : changer++;
        const answer = await control(world, unlink ? "unlink" : "link", "POST", { userId }) as {
          address?: string;
        };
        const expect = unlink ? null : answer.address!;
        if (!unlink) linkedDuringRun.push({ userId, at: performance.now() });
        for (const after of CHECK_AFTER_S) setTimeout(() => join(userId, expect), after * 1_000);
      }, 60_000 / LINK_CHANGES_PER_MIN),
      setInterval(() => {
        rounds++;
        const server = Math.floor(Math.random() * options.servers);
        send(Math.floor(server / perProcess), {
          kind: "pay",
          server: server % perProcess + 1,
          items: [1, 2].map((n) => ({
            kind: "transfer-sol",
            to: { address: base58.encode(crypto.getRandomValues(new Uint8Array(32))) },
            amount: "0.001",
            idempotencyKey: `round-${rounds}-${n}`,
          })),
        });
      }, ROUND_EVERY_S * 1_000),
      setInterval(() => load.push(Deno.loadavg()[0] ?? NaN), 5_000),
    ];
    const shutdownAt = options.seconds * SHUTDOWN_AT;
    const shutdown = setTimeout(() => {
      for (let p = 0; p < options.processes; p++) send(p, { kind: "restart" });
      const rejoining = [...playing];
      const perTick = rejoining.length / (REJOIN_S * 10);
      let next = 0;
      const rejoin = setInterval(() => {
        for (let i = 0; i < perTick && next < rejoining.length; i++) join(rejoining[next++]!);
        if (next >= rejoining.length) clearInterval(rejoin);
      }, 100);
      timers.push(rejoin);
    }, shutdownAt * 1_000);
    await sleep(options.seconds * 1_000);
    for (const timer of timers) clearInterval(timer);
    clearTimeout(shutdown);
    // The last answers come in, then every process reports and ends.
    await sleep(10_000);
    const counted = (await control(world, "requests", "GET") as Array<{ path: string; at: number }>)
      .filter((request) => !request.path.startsWith("/v1/events"));
    for (let p = 0; p < options.processes; p++) send(p, { kind: "stop" });
    await Promise.all(outputs);
    await commands.shutdown();
    const usage = world.memoryStore.usage();
    return report({
      options,
      loadSeconds,
      sent,
      results,
      done,
      counted,
      startedAt: started / 1_000,
      shutdownAt,
      load,
      units: usage.unitsByMinute.slice(unitsBefore),
      usage,
      messages: world.messages().length - messagesBefore,
      linkChanges: changes,
      rounds,
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The directory as earlier days left it: the players playing now and those who played before. */
function seedDirectory(world: LuauWorld) {
  const map = `Blocklink-${world.info.topic}`;
  for (let i = 0; i < KNOWN_PLAYERS; i++) {
    const linked = Math.random() < LINKED_SHARE;
    const address = linked ? base58.encode(crypto.getRandomValues(new Uint8Array(32))) : undefined;
    world.memoryStore.seed(map, String(FIRST_USER + i), { a: address, e: 0 }, ENTRY_S);
  }
  for (let i = 0; i < CHANGERS; i++) {
    world.memoryStore.seed(map, String(FIRST_CHANGER + i), { e: 0 }, ENTRY_S);
  }
}

async function control(
  world: LuauWorld,
  name: string,
  method = "POST",
  body?: unknown,
): Promise<unknown> {
  const res = await fetch(`${world.info.baseUrl}/_test/${name}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? null : JSON.stringify(body),
  });
  return await res.json();
}

function report(run: {
  options: { servers: number; processes: number; seconds: number; drop: number };
  loadSeconds: number;
  sent: Map<number, Sent>;
  results: Result[];
  done: Array<{ requests: Record<string, number>; refused: number }>;
  counted: Array<{ path: string; at: number }>;
  startedAt: number;
  shutdownAt: number;
  load: number[];
  units: Array<{ minute: number; units: number }>;
  usage: ReturnType<LuauWorld["memoryStore"]["usage"]>;
  messages: number;
  linkChanges: number;
  rounds: number;
}): string {
  const { options, sent, results } = run;
  const latencies: number[] = [];
  let joins = 0;
  let failed = 0;
  let checked = 0;
  let stale = 0;
  let paid = 0;
  let refused = 0;
  const codes: Record<string, number> = {};
  const joinCodes: Record<string, number> = {};
  for (const result of results) {
    const command = sent.get(result.id);
    if (command?.kind === "pay") {
      paid += result.paid ?? 0;
      refused += result.refused ?? 0;
      // An empty Luau table encodes as {}, not [].
      const refusals = Array.isArray(result.codes) ? result.codes : [];
      for (const code of refusals) codes[code] = (codes[code] ?? 0) + 1;
      continue;
    }
    joins++;
    if (!result.ok) {
      failed++;
      joinCodes[result.code ?? "?"] = (joinCodes[result.code ?? "?"] ?? 0) + 1;
      continue;
    }
    latencies.push(result.ms ?? NaN);
    if (command?.expect !== undefined) {
      checked++;
      if ((result.address ?? null) !== command.expect) {
        stale++;
        console.error(`Stale join: ${JSON.stringify({ result, expect: command.expect })}`);
      }
    }
  }
  const unanswered = [...sent.values()].filter((s) => s.kind === "join").length - joins;
  const minutes = run.options.seconds / 60;
  const byMinute = new Map<number, number>();
  for (const request of run.counted) {
    const minute = Math.floor((request.at - run.startedAt) / 60);
    if (minute >= 0) byMinute.set(minute, (byMinute.get(minute) ?? 0) + 1);
  }
  const perMinute = [...byMinute.entries()].sort(([a], [b]) => a - b).map(([, n]) => n);
  // The soft shutdown's two minutes happen once a day; the other minutes are the day's usual ones.
  const shutdownMinutes = new Set([0, 1, 2].map((m) => Math.floor(run.shutdownAt / 60) + m));
  const usual = [...byMinute.entries()].filter(([m]) => !shutdownMinutes.has(m) && m < minutes);
  const usualMean = usual.reduce((n, [, c]) => n + c, 0) / Math.max(usual.length, 1);
  const shutdownExtra = [...byMinute.entries()].filter(([m]) => shutdownMinutes.has(m))
    .reduce((n, [, c]) => n + c - usualMean, 0);
  const projected = usualMean * 1_440 + Math.max(shutdownExtra, 0);
  const sorted = latencies.toSorted((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const requests: Record<string, number> = {};
  for (const process of run.done) {
    for (const [family, n] of Object.entries(process.requests)) {
      requests[family] = (requests[family] ?? 0) + n;
    }
  }
  const units = run.units.map((u) => u.units);
  const meanLoad = sum(run.load) / Math.max(run.load.length, 1);
  const kb = (bytes: number) => `${(bytes / 1_024).toFixed(0)} KB`;
  return [
    `${options.servers} servers in ${options.processes} Lune processes for ${options.seconds} s ` +
    `(they took ${run.loadSeconds.toFixed(0)} s to start), default options, ${
      (options.drop * 100).toFixed(0)
    } % of messages lost on each server; ${JOINS_PER_S} joins ` +
    `a second on random servers (${(NEW_PLAYER_SHARE * 100).toFixed(1)} % of players the ` +
    `directory has no record of), ${LINK_CHANGES_PER_MIN} link changes a minute through the ` +
    `linking flow, a round end paying 2 rewards every ${ROUND_EVERY_S} s, a soft shutdown at ` +
    `${run.shutdownAt.toFixed(0)} s with all ${USERS} players rejoining within ${REJOIN_S} s.`,
    "",
    "| Counted requests | Value |",
    "| --- | --- |",
    `| In the run | ${run.counted.length} |`,
    `| By minute | ${perMinute.join(", ")} |`,
    `| Largest minute (limit 600; target at most 300) | ${Math.max(0, ...perMinute)} |`,
    `| Projected day: usual minutes' mean x 1,440 + the shutdown's excess (target at most 50,000) | ${
      projected.toFixed(0)
    } |`,
    `| By route, as the servers sent them | ${
      Object.entries(requests).filter(([family]) => !family.startsWith("GET /v1/events"))
        .map(([family, n]) => `${family}: ${n}`).join("; ")
    } |`,
    `| Feed reads (not counted) | ${requests["GET /v1/events"] ?? 0} |`,
    "",
    "| Joins | Value |",
    "| --- | --- |",
    `| Answered | ${joins} (${failed} with an error${
      failed ? ` ${JSON.stringify(joinCodes)}` : ""
    }, ${unanswered} without an answer by the end) |`,
    `| Join to wallet, p50 / p95 / max (ms) | ${fmt(at(0.5))} / ${fmt(at(0.95))} / ${
      fmt(sorted.at(-1))
    } |`,
    `| Checked 15 s and 30 s after a link change | ${checked}, stale: ${stale} |`,
    `| Link changes / rounds | ${run.linkChanges} / ${run.rounds} |`,
    `| Payouts | ${paid} paid, ${refused} refused${
      Object.keys(codes).length ? ` (${JSON.stringify(codes)})` : ""
    } |`,
    "",
    "| MemoryStore (the game's budgets for 30,000 users) | Value |",
    "| --- | --- |",
    `| Request units by minute (limit ${run.usage.unitsPerMinuteLimit}) | ${units.join(", ")} |`,
    `| Memory now / peak (limit ${kb(run.usage.memoryLimitBytes)}) | ${
      kb(run.usage.memoryBytes)
    } / ${kb(run.usage.peakMemoryBytes)} |`,
    `| Refused | ${JSON.stringify(run.usage.refused)} |`,
    "",
    `Messages on the topic: ${run.messages} in ${minutes.toFixed(0)} minutes (${
      (run.messages / minutes).toFixed(1)
    } a minute; a topic carries about 80). Machine: ${navigator.hardwareConcurrency} cores, ` +
    `load average ${meanLoad.toFixed(1)} (mean of the run).`,
  ].join("\n");
}

function fmt(value: number | undefined): string {
  if (value === undefined || Number.isNaN(value)) return "n/a";
  return value >= 100 ? value.toFixed(0) : value.toFixed(1);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

if (import.meta.main) {
  const servers = Number(Deno.env.get("BENCH_GAME_SERVERS") ?? 1_000);
  const processes = Number(Deno.env.get("BENCH_GAME_PROCESSES") ?? 20);
  const seconds = Number(Deno.env.get("BENCH_GAME_SECONDS") ?? 600);
  const drop = Number(Deno.env.get("BENCH_GAME_DROP") ?? 0.05);
  // Another SDK model (an older release, to compare), instead of one built from sdk/luau.
  const rbxm = Deno.env.get("BENCH_GAME_RBXM");
  console.log(`## A day in the life of a popular game\n`);
  console.log(await benchGameDay({ servers, processes, seconds, drop, rbxm }));
}

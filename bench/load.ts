/** Load generators for `deno task bench`: Debian's wrk when installed, else a Deno fetch loop. */

// BENCH_PIN=1 (Linux, taskset): bench servers on the first core, wrk on the second, so the server
// has one core of its own and figures repeat within a few percent instead of a third.
const PIN = Deno.env.get("BENCH_PIN") === "1";

/** One measured run. */
export interface LoadResult {
  name: string;
  tool: string;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  /** CPU time the server process spent per request (all its threads), when it was measured. */
  serverCpuUs?: number;
}

/** Options for one load run. */
export interface LoadOptions {
  connections: number;
  seconds: number;
  /** Lua for wrk's `request` function; each call must return one request. */
  wrkScript?: string;
  /** The equivalent request for the Deno generator. */
  request?: (i: number) => Request;
  /** The server process under load, to report its CPU time per request (Linux). */
  serverPid?: number;
}

/** True when wrk is on PATH. */
export async function hasWrk(): Promise<boolean> {
  try {
    const out = await new Deno.Command("wrk", {
      args: ["--version"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    return out.code === 0 || out.code === 1;
  } catch {
    return false;
  }
}

/** Loads `url` for `seconds` with `connections` concurrent connections. */
export async function runLoad(
  name: string,
  url: string,
  options: LoadOptions,
): Promise<LoadResult> {
  const cpuBefore = options.serverPid ? processCpuSeconds(options.serverPid) : NaN;
  const result = options.wrkScript && await hasWrk()
    ? await runWrk(name, url, options)
    : await runFetchLoop(name, url, options);
  if (!options.serverPid) return result;
  const cpu = processCpuSeconds(options.serverPid) - cpuBefore;
  return Number.isNaN(cpu) ? result : { ...result, serverCpuUs: cpu * 1e6 / result.requests };
}

// Linux's clock tick, in which /proc reports CPU time (USER_HZ, 100 on every mainstream build).
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds process `pid` has used, user and system, all threads; NaN without Linux's /proc. */
export function processCpuSeconds(pid: number): number {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // Fields after the command name, which may hold spaces: utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

async function runWrk(name: string, url: string, options: LoadOptions): Promise<LoadResult> {
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(script, options.wrkScript + STATUS_LUA);
  const out = await new Deno.Command(PIN ? "taskset" : "wrk", {
    args: [
      ...(PIN ? ["-c", "1", "wrk"] : []),
      "-t2",
      `-c${options.connections}`,
      // wrk takes whole seconds only (a fractional one gets its usage text and no run)
      `-d${Math.max(1, Math.round(options.seconds))}s`,
      "--latency",
      "-s",
      script,
      url,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  await Deno.remove(script);
  if (!out.success) {
    throw new Error(`wrk failed for ${name}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  const text = new TextDecoder().decode(out.stdout);
  const field = (re: RegExp) => text.match(re)?.[1];
  const requests = Number(field(/(\d+) requests in/));
  const errors = Number(field(/non2xx=(\d+)/) ?? 0) +
    Number(field(/Socket errors:.*?timeout (\d+)/) ?? 0);
  return {
    name,
    tool: "wrk",
    requests,
    rps: Number(field(/Requests\/sec:\s+([\d.]+)/)),
    p50Ms: toMs(field(/50%\s+([\d.]+\w+)/)),
    p99Ms: toMs(field(/99%\s+([\d.]+\w+)/)),
    errors,
  };
}

// Counts answers outside 2xx so a run that measured errors cannot pass for a fast one.
const STATUS_LUA = `
local non2xx = 0
response = function(status, headers, body)
  if status < 200 or status > 299 then non2xx = non2xx + 1 end
end
done = function(summary, latency, requests)
  io.write("non2xx=" .. non2xx .. "\\n")
end
`;

function toMs(value: string | undefined): number {
  const m = value?.match(/^([\d.]+)(us|ms|s)$/);
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "s" ? n * 1000 : n;
}

async function runFetchLoop(name: string, url: string, options: LoadOptions): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let i = 0;
  const end = performance.now() + options.seconds * 1000;
  const started = performance.now();
  await Promise.all(Array.from({ length: options.connections }, async () => {
    while (performance.now() < end) {
      const request = options.request ? options.request(i++) : new Request(url);
      const t0 = performance.now();
      const res = await fetch(request);
      await res.body?.cancel();
      latencies.push(performance.now() - t0);
      if (!res.ok) errors++;
    }
  }));
  const elapsed = (performance.now() - started) / 1000;
  return summarizeLatencies(name, "deno-fetch-loop", { latencies, elapsed, errors });
}

/** A result row from measured latencies (ms) over `elapsed` seconds. */
export function summarizeLatencies(
  name: string,
  tool: string,
  run: { latencies: number[]; elapsed: number; errors: number },
): LoadResult {
  const latencies = run.latencies.toSorted((a, b) => a - b);
  return {
    name,
    tool,
    requests: latencies.length,
    rps: latencies.length / run.elapsed,
    // No request finished: no latency to show (NaN prints as such in the table).
    p50Ms: latencies[Math.floor(latencies.length * 0.5)] ?? NaN,
    p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? NaN,
    errors: run.errors,
  };
}

/** Starts a bench server script in its own process and waits for it to print its JSON start line. */
export async function startServer(
  script: string,
  env: Record<string, string> = {},
): Promise<{ info: Record<string, unknown>; pid: number; stop: () => Promise<void> }> {
  // taskset execs the command, so the child's pid is the server's either way.
  const command = ["run", "-A", "--unstable-kv", "--unstable-cron", script];
  const child = new Deno.Command(PIN ? "taskset" : Deno.execPath(), {
    args: PIN ? ["-c", "0", Deno.execPath(), ...command] : command,
    env: { ...env, LOG_LEVEL: "warn" },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  while (!buffer.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`Bench server ${script} exited before starting`);
    buffer += value;
  }
  const info = JSON.parse(buffer.slice(0, buffer.indexOf("\n")));
  // Keep draining so the child never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done);
  })();
  return {
    info,
    pid: child.pid,
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/** Formats results as a Markdown table with ratios against `baseline`. */
export function resultTable(results: LoadResult[], baseline: LoadResult | undefined): string {
  if (!baseline) throw new Error("Cannot print the results: the baseline run is missing");
  const rows = results.map((r) =>
    `| ${r.name} | ${r.tool} | ${Math.round(r.rps)} | ${r.p50Ms.toFixed(2)} | ${
      r.p99Ms.toFixed(2)
    } | ${(r.rps / baseline.rps).toFixed(2)} | ${r.errors} | ${r.serverCpuUs?.toFixed(1) ?? "–"} |`
  );
  return [
    `| run | tool | requests/s | p50 ms | p99 ms | ratio to ${baseline.name} | errors | server CPU µs/request |`,
    "|---|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

/** Cycles through `items` (API keys, wallets) one call at a time. */
export function roundRobin<T>(items: readonly T[]): () => T {
  if (items.length === 0) throw new Error("Cannot cycle through an empty list");
  let n = 0;
  // In range: the list is not empty and the index is taken modulo its length.
  return () => items[n++ % items.length] as T;
}

/**
 * The player-wallet route's load, round-robin over every project's key (so quotas are counted but
 * never reached): a wrk script and the same requests for the fallback client.
 */
export function playerWalletLoad(
  url: string,
  keys: readonly string[],
): { wrkScript: string; request: (n: number) => Request } {
  const wrkScript = `
local keys = {${keys.map((k) => `"${k}"`).join(",")}}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/v1/players/1/wallet", { ["x-api-key"] = keys[(i % #keys) + 1] })
end
`;
  const nextKey = roundRobin(keys);
  return { wrkScript, request: () => new Request(url, { headers: { "x-api-key": nextKey() } }) };
}

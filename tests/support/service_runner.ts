/**
 * Runs the service as a real process (`service_process.ts`, composed as `main.ts` does) with the
 * environment a test gives it, and keeps its log lines. Used by the tests that need real
 * processes: the chaos run (SIGKILL), rolling SECRET rotation, floods from many addresses.
 */

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
    env: { PORT: "0", ...env },
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

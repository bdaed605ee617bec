// Memory under hostile uploads (issue 12, item 6): eight parallel 100 MB uploads to a real service
// process, by Content-Length and chunked, each refused with 413 while the process stays small.
import assert from "node:assert/strict";

const UPLOAD_BYTES = 100 * 1024 * 1024;
const RSS_LIMIT_BYTES = 200 * 1024 * 1024;
const CHUNK = new Uint8Array(64 * 1024).fill(0x20);
const encoder = new TextEncoder();
// Refused at once, the uploads finish in about a second; reading them whole takes minutes.
const ANSWER_DEADLINE_MS = 60_000;

async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Uploads not answered within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr;
  listener.close();
  return port;
}

/** Resident memory of a Linux process, in bytes (`VmRSS`), or the peak so far (`VmHWM`). */
async function residentBytes(pid: number, field: "VmRSS" | "VmHWM"): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
  if (!kb) throw new Error(`No ${field} for process ${pid}`);
  return Number(kb[1]) * 1024;
}

/** Sends a 100 MB body until the server answers; returns the status line and body of the answer. */
async function upload(port: number, path: string, mode: "length" | "chunked"): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = [
    `POST ${path} HTTP/1.1`,
    `Host: 127.0.0.1:${port}`,
    "Content-Type: application/json",
    `Origin: http://127.0.0.1:${port}`,
    mode === "length" ? `Content-Length: ${UPLOAD_BYTES}` : "Transfer-Encoding: chunked",
    "",
    "",
  ].join("\r\n");
  let answered = false;
  const reading = (async () => {
    const buffer = new Uint8Array(64 * 1024);
    let text = "";
    while (!text.includes("}}")) {
      const n = await conn.read(buffer).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buffer.subarray(0, n));
    }
    answered = true;
    // The server stops reading once it has answered; closing ends a write blocked on a full window.
    conn.close();
    return text;
  })();
  try {
    await conn.write(encoder.encode(head));
    const frame = encoder.encode(`${CHUNK.length.toString(16)}\r\n`);
    for (let sent = 0; sent < UPLOAD_BYTES && !answered; sent += CHUNK.length) {
      if (mode === "chunked") await conn.write(frame);
      await conn.write(CHUNK);
      if (mode === "chunked") await conn.write(encoder.encode("\r\n"));
    }
  } catch {
    // The server may close the connection once it has answered; that is the point.
  }
  return await reading;
}

Deno.test({
  name: "Eight parallel 100 MB uploads answer 413 and leave the service under 200 MB resident",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const port = freePort();
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--unstable-kv", "--unstable-cron", "main.ts"],
      env: {
        PORT: String(port),
        BASE_URL: `http://127.0.0.1:${port}`,
        KV_PATH: ":memory:",
        SECRET: "memory-test-secret-memory-test-secret",
        RPC_URL_DEVNET: "http://127.0.0.1:9",
        RPC_URL_MAINNET: "http://127.0.0.1:9",
      },
      stdout: "piped",
      stderr: "null",
    }).spawn();
    let draining: Promise<void> | undefined;
    try {
      // Given the service is listening
      const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      while (!seen.includes('"Listening"')) {
        const { value, done } = await lines.read();
        if (done) throw new Error(`Service exited before listening: ${seen}`);
        seen += value;
      }
      // Keep draining its log, so a full pipe never stalls it.
      draining = (async () => {
        while (!(await lines.read().catch(() => ({ done: true }))).done);
      })();
      let peak = await residentBytes(child.pid, "VmRSS");
      const sampler = setInterval(async () => {
        peak = Math.max(peak, await residentBytes(child.pid, "VmRSS").catch(() => 0));
      }, 20);
      // When eight clients each upload 100 MB at once, by length and chunked, to routes of every kind
      const paths = ["/auth/wallet/challenge", "/v1/tx/transfer-sol", "/dashboard/projects", "/x"];
      const answers = await withDeadline(
        Promise.all(
          [...paths, ...paths].map((path, i) => upload(port, path, i % 2 ? "chunked" : "length")),
        ),
        ANSWER_DEADLINE_MS,
      );
      clearInterval(sampler);
      const highWater = await residentBytes(child.pid, "VmHWM");
      // Then every upload is refused with 413 payload_too_large
      for (const answer of answers) {
        assert.deepEqual(
          answer.split("\r\n")[0],
          "HTTP/1.1 413 Payload Too Large",
          answer.slice(0, 200),
        );
        assert.ok(answer.includes('"code":"payload_too_large"'), answer.slice(0, 300));
      }
      // And the process never held more than 200 MB
      assert.ok(peak < RSS_LIMIT_BYTES, `sampled peak ${Math.round(peak / 2 ** 20)} MB`);
      assert.ok(
        highWater < RSS_LIMIT_BYTES,
        `high-water mark ${Math.round(highWater / 2 ** 20)} MB`,
      );
    } finally {
      child.kill("SIGKILL");
      await child.status;
      await draining;
    }
  },
});

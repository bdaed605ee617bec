/**
 * A KV Connect test server: the protocol's metadata exchange and data path (snapshot read, atomic
 * write) over HTTP/1.1, backed by a local Deno KV, so that Deno's own client
 * (`Deno.openKv("http://...")` with `DENO_KV_ACCESS_TOKEN`) runs against it the way it runs against a
 * self-hosted `denokv`. Faults for tests and benches: a latency added to every round trip, and
 * answers cut off before or after a write is applied (the client cannot tell whether it applied),
 * writes applied but answered 503, which Deno's client sends again by itself, writes that lose
 * their checks, and a write held back until the test lets it go. Deno's client speaks
 * HTTP/2 without TLS (prior knowledge), which `Deno.serve` accepts.
 */
import { messages, READ_SUCCESS, WriteStatus } from "./datapath.ts";
import { atomicWrite, BadRequest, snapshotRead } from "./store.ts";

/** What the next data path calls suffer; tests and benches change it while the server runs. */
export interface KvConnectFaults {
  /** Added before every answer, metadata exchange and data path alike. */
  latencyMs: number;
  /** Atomic writes whose answer is cut off (the stream reset) without applying them. */
  cutBeforeWrite: number;
  /** Atomic writes applied, then their answer cut off. */
  cutAfterWrite: number;
  /** Atomic writes applied, then answered 503: Deno's client sends them again. */
  unavailableAfterWrite: number;
  /** The next write touching a key that contains this text is applied, then answered 503. */
  unavailableAfterWriteTo: string | null;
  /**
   * The next `times` writes touching a key that contains `text` lose their checks: not applied,
   * answered as a failed check, as if another writer changed a checked key before each.
   */
  losingChecksTo: { text: string; times: number } | null;
  /**
   * The next write touching a key that contains `text` waits, unapplied, until `release` settles;
   * `held` is called once it waits, so a test can let another write pass it first.
   */
  holdingWriteTo: { text: string; held: () => void; release: Promise<void> } | null;
}

/** A running test server. */
export interface KvConnectServer {
  /** The URL to give `Deno.openKv` (the metadata exchange endpoint). */
  url: string;
  faults: KvConnectFaults;
  /**
   * Data path calls received so far, by kind; `resent`: atomic writes received again after a 503
   * answered them (Deno's client sending them again), counted once handled.
   */
  calls: { snapshotRead: number; atomicWrite: number; resent: number };
  /**
   * While an array, every data path call is appended to it when answered (`DataPathCall`), so a
   * test can tell which calls of a request waited for which.
   */
  trace: DataPathCall[] | null;
  close(): Promise<void>;
}

/**
 * One data path call as the server saw it. `arrived` and `answered` are positions in the order of
 * the server's arrivals and answers (one counter for both): a call that arrived after another was
 * answered may have waited for it; two calls each arriving before the other was answered were in
 * flight together.
 */
export interface DataPathCall {
  kind: "read" | "write";
  /** The keys read or written, as text (their bytes decoded, separators dropped). */
  keys: string[];
  /** The call's body, in bytes as sent (Deno's client holds a larger body back: `kv/open_kv.ts`). */
  bytes: number;
  arrived: number;
  answered: number;
}

const DATA_PATH = "/v2";

// A key's printable parts: the tuple encoding's separators and type tags become spaces.
function keyText(key: Uint8Array): string {
  const text = [...key].map((b) => b < 0x20 ? " " : String.fromCharCode(b)).join("");
  return text.replace(/ +/g, " ").trim();
}

/** Starts the server on `kv` (which it does not close) with the access token clients must send. */
export function startKvConnectServer(
  kv: Deno.Kv,
  options: { accessToken: string; port?: number; hostname?: string },
): KvConnectServer {
  const databaseId = crypto.randomUUID();
  const dataToken = crypto.randomUUID();
  const faults: KvConnectFaults = {
    latencyMs: 0,
    cutBeforeWrite: 0,
    cutAfterWrite: 0,
    unavailableAfterWrite: 0,
    unavailableAfterWriteTo: null,
    losingChecksTo: null,
    holdingWriteTo: null,
  };
  const calls = { snapshotRead: 0, atomicWrite: 0, resent: 0 };
  let trace: DataPathCall[] | null = null;
  let position = 0;
  // Bodies of the writes answered 503, to count them when they come again.
  const unanswered = new Set<string>();

  async function answer(
    status: number,
    type: string,
    body: Uint8Array | string,
  ): Promise<Response> {
    if (faults.latencyMs > 0) await new Promise((r) => setTimeout(r, faults.latencyMs));
    return new Response(body as BodyInit, { status, headers: { "content-type": type } });
  }

  function cutOff(): Response {
    // Headers go out, then the stream breaks: the client sees its call fail mid-answer.
    const body = new ReadableStream({ pull: (c) => c.error(new Error("Connection cut")) });
    return new Response(body, { headers: { "content-type": "application/x-protobuf" } });
  }

  async function write(body: Uint8Array): Promise<Response> {
    calls.atomicWrite++;
    const sent = new TextDecoder("latin1").decode(body);
    const again = unanswered.delete(sent);
    try {
      return await applyWrite(body, sent);
    } finally {
      if (again) calls.resent++;
    }
  }

  async function applyWrite(body: Uint8Array, sent: string): Promise<Response> {
    if (faults.cutBeforeWrite > 0) {
      faults.cutBeforeWrite--;
      return cutOff();
    }
    const request = messages.atomicWrite.decode(body);
    const touches = (text: string) =>
      request.mutations.some((m) => new TextDecoder().decode(m.key).includes(text));
    const losing = faults.losingChecksTo;
    if (losing && losing.times > 0 && touches(losing.text)) {
      losing.times--;
      const out = messages.atomicWriteOutput.encode({ status: WriteStatus.CHECK_FAILURE });
      return await answer(200, "application/x-protobuf", out);
    }
    const holding = faults.holdingWriteTo;
    if (holding && touches(holding.text)) {
      faults.holdingWriteTo = null;
      holding.held();
      await holding.release;
    }
    const versionstamp = await atomicWrite(kv, request);
    if (faults.cutAfterWrite > 0) {
      faults.cutAfterWrite--;
      return cutOff();
    }
    if (faults.unavailableAfterWrite > 0) {
      faults.unavailableAfterWrite--;
      unanswered.add(sent);
      return await answer(503, "text/plain", "Answer lost");
    }
    const text = faults.unavailableAfterWriteTo;
    if (text && touches(text)) {
      faults.unavailableAfterWriteTo = null;
      unanswered.add(sent);
      return await answer(503, "text/plain", "Answer lost");
    }
    const out = messages.atomicWriteOutput.encode(
      versionstamp
        ? { status: WriteStatus.SUCCESS, versionstamp }
        : { status: WriteStatus.CHECK_FAILURE },
    );
    return await answer(200, "application/x-protobuf", out);
  }

  async function handle(req: Request): Promise<Response> {
    const path = new URL(req.url).pathname;
    const auth = req.headers.get("authorization") ?? "";
    if (req.method !== "POST") return await answer(405, "text/plain", "Method not allowed");
    if (path === "/") {
      if (auth !== `Bearer ${options.accessToken}`) {
        return await answer(401, "text/plain", "Invalid access token");
      }
      const metadata = {
        version: 2,
        databaseId,
        endpoints: [{ url: DATA_PATH, consistency: "strong" }],
        token: dataToken,
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      };
      return await answer(200, "application/json", JSON.stringify(metadata));
    }
    if (auth !== `Bearer ${dataToken}` || req.headers.get("x-denokv-database-id") !== databaseId) {
      return await answer(401, "text/plain", "Invalid data path token or database id");
    }
    const body = new Uint8Array(await req.arrayBuffer());
    const arrived = position++;
    const traced = (kind: DataPathCall["kind"], keys: () => Uint8Array[]) => (res: Response) => {
      trace?.push({
        kind,
        keys: keys().map(keyText),
        bytes: body.length,
        arrived,
        answered: position++,
      });
      return res;
    };
    try {
      if (path === `${DATA_PATH}/atomic_write`) {
        const written = () => messages.atomicWrite.decode(body).mutations.map((m) => m.key);
        return await write(body).then(traced("write", written));
      }
      if (path === `${DATA_PATH}/snapshot_read`) {
        calls.snapshotRead++;
        const { ranges: asked } = messages.snapshotRead.decode(body);
        const ranges = await snapshotRead(kv, asked);
        const read = traced("read", () => asked.map((r) => r.start));
        const out = messages.snapshotReadOutput.encode({
          ranges: ranges.map((values) => ({ values })),
          read_is_strongly_consistent: true,
          status: READ_SUCCESS,
        });
        return await answer(200, "application/x-protobuf", out).then(read);
      }
      return await answer(404, "text/plain", "Not found");
    } catch (error) {
      if (error instanceof BadRequest) return await answer(400, "text/plain", error.message);
      throw error;
    }
  }

  const server = Deno.serve({
    port: options.port ?? 0,
    hostname: options.hostname ?? "127.0.0.1",
    onListen: () => {},
  }, handle);
  return {
    url: `http://${server.addr.hostname}:${server.addr.port}`,
    faults,
    calls,
    get trace() {
      return trace;
    },
    set trace(calls) {
      trace = calls;
    },
    close: () => server.shutdown(),
  };
}

/**
 * One webhook POST, written by hand over a socket so that the address rules hold: the host is
 * resolved once, every address is checked (`destination.ts`), and the connection goes to an
 * address that was checked; TLS is then started with the URL's host name, so the certificate is
 * verified for that name. `fetch()` resolves names itself, a second time, which a name pointed
 * elsewhere in between (DNS rebinding) would exploit.
 *
 * HTTP/1.1, one request per connection (`Connection: close`), no redirect followed (a 3xx is an
 * answer like any other), the request body at most 64 KB, the whole attempt (resolution,
 * connection, TLS, request, the answer's head) within `timeoutMs`, and the answer read bounded:
 * its head at most 16 KB, then at most 1 KB of its body (for the delivery log), read for at most
 * one more second.
 */
import { abortable } from "../../core/deadline.ts";
import { type DestinationOptions, parseEndpointUrl, resolveDestination } from "./destination.ts";
import type { HostResolver } from "./runtime.ts";

/** Largest request body sent. */
const MAX_BODY_BYTES = 64 * 1024;
/** Largest answer head read. */
const MAX_HEAD_BYTES = 16 * 1024;
/** Most of the answer's body read. */
const MAX_ANSWER_BYTES = 1024;
/** How long the answer's body is waited for once its head has come. */
const ANSWER_WAIT_MS = 1_000;
/** The answer's body as kept for the delivery log, in characters. */
const ANSWER_PREVIEW_CHARS = 200;

/** What to send. */
export interface WebhookRequest {
  url: string;
  /** Extra headers (the signature headers). */
  headers: Record<string, string>;
  body: string;
}

/** How to send it. */
export interface PostOptions extends DestinationOptions {
  resolve: HostResolver;
  timeoutMs: number;
  /** Root certificates trusted besides the system's. */
  caCerts: string[];
}

/** How one attempt ended. */
export type PostOutcome =
  /** The receiver answered; `answer` is the start of its body, as text. */
  | { kind: "answered"; status: number; answer: string }
  /** Not sent: the URL or an address it resolves to is not allowed. */
  | { kind: "refused"; reason: string }
  | { kind: "timeout" }
  | { kind: "network"; error: string };

const encoder = new TextEncoder();

/** POSTs one webhook; never throws. */
export async function postWebhook(
  request: WebhookRequest,
  options: PostOptions,
): Promise<PostOutcome> {
  const url = parseEndpointUrl(request.url, options);
  if (typeof url === "string") return { kind: "refused", reason: `The URL ${url}` };
  const body = encoder.encode(request.body);
  if (body.length > MAX_BODY_BYTES) {
    return { kind: "refused", reason: `The event is over ${MAX_BODY_BYTES} bytes` };
  }
  const controller = new AbortController();
  const { signal } = controller;
  let conn: Deno.Conn | null = null;
  const timer = setTimeout(() => {
    controller.abort(new Error("timeout"));
    closeQuietly(conn);
  }, options.timeoutMs);
  try {
    const destination = await resolveDestination(url, { ...options, signal });
    if ("refused" in destination) return { kind: "refused", reason: destination.refused };
    conn = await connect(url, destination.addresses, { ...options, signal });
    await writeAll(conn, requestBytes(url, request.headers, body));
    const reader = new AnswerReader(conn);
    const status = await reader.readStatus();
    clearTimeout(timer);
    return { kind: "answered", status, answer: await reader.readPreview() };
  } catch (error) {
    if (signal.aborted) return { kind: "timeout" };
    return { kind: "network", error: error instanceof Error ? error.message : String(error) };
  } finally {
    clearTimeout(timer);
    closeQuietly(conn);
  }
}

// Connects to the first address that takes the connection, then starts TLS for an https URL.
async function connect(
  url: URL,
  addresses: readonly string[],
  options: { caCerts: string[]; signal: AbortSignal },
): Promise<Deno.Conn> {
  const port = Number(url.port) || (url.protocol === "https:" ? 443 : 80);
  let lastError: unknown = new Error("no address");
  for (const hostname of addresses) {
    const connecting = Deno.connect({ hostname, port });
    // A connection that opens after the deadline is closed at once.
    connecting.then((c) => options.signal.aborted && closeQuietly(c), () => {});
    let tcp: Deno.TcpConn;
    try {
      tcp = await abortable(connecting, options.signal);
    } catch (error) {
      if (options.signal.aborted) throw error;
      lastError = error;
      continue;
    }
    if (url.protocol === "http:") return tcp;
    const tls = await Deno.startTls(tcp, {
      hostname: url.hostname.replace(/^\[|\]$/g, ""),
      alpnProtocols: ["http/1.1"],
      ...(options.caCerts.length > 0 ? { caCerts: options.caCerts } : {}),
    });
    try {
      await abortable(tls.handshake(), options.signal);
    } catch (error) {
      closeQuietly(tls);
      throw new Error(`TLS handshake failed: ${error instanceof Error ? error.message : error}`);
    }
    return tls;
  }
  throw new Error(
    `Could not connect to ${addresses.join(", ")} port ${port}: ${
      lastError instanceof Error ? lastError.message : lastError
    }`,
  );
}

function requestBytes(url: URL, headers: Record<string, string>, body: Uint8Array): Uint8Array {
  const lines = [
    `POST ${url.pathname}${url.search} HTTP/1.1`,
    `host: ${url.host}`,
    "user-agent: Blocklink-Webhooks/1",
    "content-type: application/json",
    `content-length: ${body.length}`,
    "connection: close",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  const head = encoder.encode(`${lines.join("\r\n")}\r\n\r\n`);
  const bytes = new Uint8Array(head.length + body.length);
  bytes.set(head);
  bytes.set(body, head.length);
  return bytes;
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.length;) {
    written += await conn.write(bytes.subarray(written));
  }
}

/** Reads an answer's head, then a bounded start of its body. */
class AnswerReader {
  #buffer = new Uint8Array(0);
  #framing: { length: number | null; chunked: boolean } = { length: null, chunked: false };

  constructor(private conn: Deno.Conn) {}

  /** The final answer's status (interim 1xx answers are skipped); throws on a malformed head. */
  async readStatus(): Promise<number> {
    for (let interim = 0; interim < 5; interim++) {
      const head = await this.#readHead();
      const status = /^HTTP\/1\.[01] (\d{3})(?: |\r|$)/.exec(head)?.[1];
      if (status === undefined) throw new Error("The answer is not HTTP/1.1");
      if (Number(status) >= 200) {
        const length = /\r\ncontent-length:\s*(\d+)\s*\r/i.exec(`${head}\r`)?.[1];
        const chunked = /\r\ntransfer-encoding:[^\r]*chunked/i.test(head);
        this.#framing = { length: length === undefined ? null : Number(length), chunked };
        return Number(status);
      }
    }
    throw new Error("The answer has too many interim (1xx) heads");
  }

  /** Up to 1 KB of the body, read for at most a second, as one line of text; never throws. */
  async readPreview(): Promise<string> {
    const timer = setTimeout(() => closeQuietly(this.conn), ANSWER_WAIT_MS);
    try {
      // Without a length, the body ends where the receiver closes (the request said `close`).
      const want = Math.min(this.#framing.length ?? Infinity, MAX_ANSWER_BYTES);
      while (this.#buffer.length < want) {
        if (!await this.#fill()) break;
      }
    } catch {
      // The body stays what arrived in time.
    } finally {
      clearTimeout(timer);
    }
    const raw = this.#buffer.subarray(0, MAX_ANSWER_BYTES);
    const bytes = this.#framing.chunked ? dechunk(raw) : raw;
    const text = new TextDecoder().decode(bytes).replace(/[\p{Cc}\p{Cf}]+/gu, " ").trim();
    return Array.from(text).slice(0, ANSWER_PREVIEW_CHARS).join("");
  }

  async #readHead(): Promise<string> {
    for (;;) {
      const end = indexOfBlankLine(this.#buffer);
      if (end >= 0) {
        const head = new TextDecoder().decode(this.#buffer.subarray(0, end));
        this.#buffer = this.#buffer.slice(end + 4);
        return head;
      }
      if (this.#buffer.length > MAX_HEAD_BYTES) {
        throw new Error(`The answer's head is over ${MAX_HEAD_BYTES} bytes`);
      }
      if (!await this.#fill()) throw new Error("The connection closed before an answer");
    }
  }

  // Reads more into the buffer; false at the end of the stream.
  async #fill(): Promise<boolean> {
    const chunk = new Uint8Array(4096);
    const n = await this.conn.read(chunk);
    if (n === null) return false;
    const next = new Uint8Array(this.#buffer.length + n);
    next.set(this.#buffer);
    next.set(chunk.subarray(0, n), this.#buffer.length);
    this.#buffer = next;
    return true;
  }
}

function indexOfBlankLine(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.length; i++) {
    if (bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
  }
  return -1;
}

// The data of the complete chunks at the start of a chunked body (a cut one is kept as far as it came).
function dechunk(bytes: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.length) {
    const lineEnd = bytes.indexOf(10, at);
    if (lineEnd < 0) break;
    const size = parseInt(new TextDecoder().decode(bytes.subarray(at, lineEnd)), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(bytes.subarray(lineEnd + 1, Math.min(lineEnd + 1 + size, bytes.length)));
    at = lineEnd + 1 + size + 2;
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function closeQuietly(conn: Deno.Conn | null): void {
  try {
    conn?.close();
  } catch {
    // Already closed.
  }
}

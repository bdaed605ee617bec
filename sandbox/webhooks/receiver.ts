// A webhook receiver stand-in: a real HTTP(S) server on loopback that keeps every request it gets
// (headers and raw body) and answers as told (a status, a delay, a redirect), with an inbox page
// for the playground. It verifies nothing itself: tests verify what it kept.
import { Shots } from "../roblox/_shots.ts";

/** One request the receiver got. */
export interface ReceivedWebhook {
  method: string;
  path: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body: string;
  /** The status it was answered with (null while a delayed answer is pending). */
  status: number | null;
  receivedAt: number;
}

/** How to answer the next requests: a status (default 200), after a delay, with a body. */
export interface ReceiverAnswer {
  status?: number;
  delayMs?: number;
  body?: string;
  /** A `location` header (with a 3xx status). */
  location?: string;
}

/** Options of the receiver. */
export interface ReceiverOptions {
  /** Serve HTTPS with this certificate and key (PEM); plain HTTP without. */
  tls?: { cert: string; key: string };
  hostname?: string;
  port?: number;
}

/** A running receiver. */
export interface WebhookReceiver extends AsyncDisposable {
  /** Its origin, `http(s)://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** Answers the next `count` requests (default 1) this way, after those already planned. */
  answerNext(answer: ReceiverAnswer, count?: number): void;
  /** Every request so far, oldest first. */
  received(): ReceivedWebhook[];
  /** Resolves once `n` requests have come; rejects after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** Starts a receiver on loopback (port 0: a free port). */
export function startWebhookReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
  const plans = new Shots<ReceiverAnswer>();
  const received: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  const held = new Set<() => void>();
  const closing = new AbortController();

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (req.method === "GET" && url.pathname === "/_inbox") return Response.json(received);
    if (req.method === "GET" && url.pathname === "/_inbox.html") {
      return new Response(inboxPage(received), {
        headers: { "content-type": "text/html; charset=utf-8" },
      });
    }
    const request: ReceivedWebhook = {
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: Object.fromEntries(req.headers),
      body: await req.text(),
      status: null,
      receivedAt: Date.now(),
    };
    received.push(request);
    for (const wake of [...waiters]) wake();
    const plan = plans.take() ?? {};
    if (plan.delayMs) await sleep(plan.delayMs, held);
    request.status = plan.status ?? 200;
    const headers = new Headers({ "content-type": "text/plain" });
    if (plan.location) headers.set("location", plan.location);
    return new Response(plan.body ?? "ok", { status: request.status, headers });
  }

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: options.hostname ?? "127.0.0.1",
      port: options.port ?? 0,
      signal: closing.signal,
      onListen({ port }) {
        const scheme = options.tls ? "https" : "http";
        const close = async () => {
          for (const release of held) release();
          closing.abort();
          await server.finished;
        };
        resolve({
          url: `${scheme}://127.0.0.1:${port}`,
          port,
          answerNext: (answer, count = 1) => plans.add(answer, count),
          received: () => [...received],
          waitFor: (n, timeoutMs = 5_000) => waitFor(n, timeoutMs),
          close,
          [Symbol.asyncDispose]: close,
        });
      },
      ...(options.tls ?? {}),
    }, handle);
  });

  function waitFor(n: number, timeoutMs: number): Promise<ReceivedWebhook[]> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (received.length < n) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve([...received]);
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`Timed out waiting for ${n} webhooks: got ${received.length}`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });
  }
}

// Waits `ms`, or less when the receiver closes.
function sleep(ms: number, held: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const release = () => {
      clearTimeout(timer);
      held.delete(release);
      resolve();
    };
    const timer = setTimeout(release, ms);
    held.add(release);
  });
}

function inboxPage(received: readonly ReceivedWebhook[]): string {
  const escape = (text: string) =>
    text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
  const rows = received.toReversed().map((r) =>
    `<tr><td>${new Date(r.receivedAt).toISOString()}</td><td>${r.status ?? "…"}</td>` +
    `<td><code>${escape(r.headers["webhook-id"] ?? "")}</code></td>` +
    `<td><pre>${escape(r.body)}</pre></td></tr>`
  ).join("");
  return `<!doctype html><meta charset="utf-8"><title>Webhook inbox</title>` +
    `<meta http-equiv="refresh" content="5"><h1>Webhook inbox</h1>` +
    `<p>${received.length} received, newest first. Each is signed: see the README's "Webhooks".</p>` +
    `<table border="1" cellpadding="4"><tr><th>Received</th><th>Answered</th><th>webhook-id</th>` +
    `<th>Body</th></tr>${rows}</table>`;
}

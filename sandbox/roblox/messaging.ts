// Stand-in for Roblox Open Cloud's MessagingService publishing API, speaking the real protocol
// (POST /cloud/v2/universes/{id}:publishMessage) plus test controls under /_control and /_inbox.
import { Hono } from "hono";
import { z } from "zod";
import { type ListenOptions, serveApp } from "./_serve.ts";
import { Shots } from "./_shots.ts";
import { renderInboxPage } from "./messaging_page.ts";

/** A publish the stand-in accepted. `data` is `message` parsed as JSON, or null when it is not JSON. */
export interface InboxMessage {
  universeId: string;
  topic: string;
  message: string;
  data: unknown;
  receivedAt: number;
}

/** One publish request and how it was answered; status null means it was held unanswered. */
export interface PublishAttempt {
  universeId: string;
  status: number | null;
  at: number;
}

/** Forced answers for the next publishes: a status, or "hang" (never answer). */
export type PublishFailure = "401" | "429" | "500" | "hang";

export interface MessagingStandInOptions extends ListenOptions {
  /** Clock in Unix ms for `receivedAt` and attempt times. */
  now?: () => number;
  /** Keys to register at start. */
  keys?: { apiKey: string; universeId: string }[];
  /**
   * Publishes a topic takes per clock minute, past which it answers 429 as Roblox does when a
   * topic's messages outrun what the game's servers may receive (about 80 a minute, whatever the
   * game's size). Unlimited by default.
   */
  topicLimitPerMinute?: number;
}

export interface MessagingStandIn {
  /** Origin to use as PUBLISH_URL. */
  url: string;
  registerKey(apiKey: string, universeId: string): void;
  /** Queues `count` (default 1) forced answers after any already queued. */
  failNext(
    failure: PublishFailure,
    options?: { count?: number | undefined; retryAfter?: number | undefined },
  ): void;
  /** Drops queued failures: publishes are answered normally again. */
  clearFailures(): void;
  inbox(): InboxMessage[];
  clearInbox(): void;
  /** Resolves with the inbox once it holds at least `n` messages; rejects after `timeoutMs`. */
  waitForMessages(n: number, timeoutMs?: number): Promise<InboxMessage[]>;
  attempts(): PublishAttempt[];
  clearAttempts(): void;
  close(): Promise<void>;
}

const TOPIC_MAX = 80;
const MESSAGE_MAX = 1024;

const publishBody = z.strictObject({
  topic: z.string().min(1).max(TOPIC_MAX),
  message: z.string().max(MESSAGE_MAX),
});

const modeBody = z.object({
  mode: z.enum(["normal", "401", "429", "500", "hang"]),
  count: z.int().min(1).optional(),
  retryAfter: z.int().min(0).optional(),
});

const keyBody = z.object({ apiKey: z.string().min(1), universeId: z.string().regex(/^\d+$/) });

interface Plan {
  failure: PublishFailure;
  retryAfter: number;
}

interface Waiter {
  n: number;
  resolve: (messages: InboxMessage[]) => void;
  reject: (error: Error) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** Starts the messaging stand-in on loopback. */
export async function startMessagingStandIn(
  options: MessagingStandInOptions = {},
): Promise<MessagingStandIn> {
  const now = options.now ?? Date.now;
  const keys = new Map<string, Set<string>>();
  const failures = new Shots<Plan>();
  let messages: InboxMessage[] = [];
  let attempts: PublishAttempt[] = [];
  let waiters: Waiter[] = [];
  // Hung requests are released only at close, so shutdown does not wait on them forever.
  const hung = new Set<() => void>();
  // Publishes taken this minute per universe and topic (with `topicLimitPerMinute`).
  const topicCounts = new Map<string, { minute: number; count: number }>();
  // Long polls of the inbox waiting for the next message.
  const polls = new Set<() => void>();

  function registerKey(apiKey: string, universeId: string) {
    const universes = keys.get(apiKey) ?? new Set<string>();
    universes.add(universeId);
    keys.set(apiKey, universes);
  }
  for (const key of options.keys ?? []) registerKey(key.apiKey, key.universeId);

  function failNext(
    failure: PublishFailure,
    opts: { count?: number | undefined; retryAfter?: number | undefined } = {},
  ) {
    failures.add({ failure, retryAfter: opts.retryAfter ?? 1 }, opts.count ?? 1);
  }

  function accept(message: InboxMessage) {
    messages.push(message);
    for (const poll of [...polls]) poll();
    waiters = waiters.filter((waiter) => {
      if (messages.length < waiter.n) return true;
      clearTimeout(waiter.timer);
      waiter.resolve([...messages]);
      return false;
    });
  }

  function waitForMessages(n: number, timeoutMs = 5_000): Promise<InboxMessage[]> {
    if (messages.length >= n) return Promise.resolve([...messages]);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters = waiters.filter((waiter) => waiter.timer !== timer);
        reject(new Error(`Timed out waiting for ${n} messages: inbox holds ${messages.length}`));
      }, timeoutMs);
      waiters.push({ n, resolve, reject, timer });
    });
  }

  const app = new Hono();

  app.post("/cloud/v2/universes/:target", async (c) => {
    const universeId = /^([^:]+):publishMessage$/.exec(c.req.param("target"))?.[1];
    if (universeId === undefined) return c.json({ code: "NOT_FOUND", message: "Not found" }, 404);
    const attempt: PublishAttempt = { universeId, status: null, at: now() };
    attempts.push(attempt);
    const answer = (body: unknown, status: 200 | 400 | 401 | 403 | 429 | 500) => {
      attempt.status = status;
      return body === null ? c.body(null, status) : c.json(body, status);
    };

    const plan = failures.take();
    if (plan?.failure === "hang") {
      return new Promise<Response>((resolve) => {
        const release = () => resolve(new Response(null, { status: 503 }));
        hung.add(release);
      });
    }
    if (plan?.failure === "429") {
      c.header("retry-after", String(plan.retryAfter));
      return answer({ code: "RESOURCE_EXHAUSTED", message: "Too many requests" }, 429);
    }
    if (plan?.failure === "500") {
      return answer({ code: "INTERNAL", message: "Internal error" }, 500);
    }

    const apiKey = c.req.header("x-api-key");
    const universes = apiKey ? keys.get(apiKey) : undefined;
    if (plan?.failure === "401" || !universes) {
      return answer({ errors: [{ code: 0, message: "Invalid API Key" }] }, 401);
    }
    if (!universes.has(universeId)) {
      return answer({
        code: "PERMISSION_DENIED",
        message: "The API key is not allowed to publish messages on this universe",
      }, 403);
    }

    const invalid = (message: string) => answer({ code: "INVALID_ARGUMENT", message }, 400);
    if (!/^\d+$/.test(universeId)) return invalid("Invalid universe ID");
    if (!c.req.header("content-type")?.startsWith("application/json")) {
      return invalid("Content-Type must be application/json");
    }
    const json = await c.req.json().catch(() => undefined);
    const parsed = publishBody.safeParse(json);
    if (!parsed.success) {
      return invalid(
        parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
      );
    }

    const { topic, message } = parsed.data;
    if (options.topicLimitPerMinute !== undefined) {
      const minute = Math.floor(now() / 60_000);
      const counter = `${universeId}:${topic}`;
      const taken = topicCounts.get(counter);
      const count = taken?.minute === minute ? taken.count : 0;
      if (count >= options.topicLimitPerMinute) {
        c.header("retry-after", String(Math.ceil((minute + 1) * 60 - now() / 1_000)));
        return answer(
          { code: "RESOURCE_EXHAUSTED", message: "Too many messages on this topic" },
          429,
        );
      }
      topicCounts.set(counter, { minute, count: count + 1 });
    }
    let data: unknown = null;
    try {
      data = JSON.parse(message);
    } catch {
      // Not every publisher sends JSON; the inbox keeps the raw string either way.
    }
    accept({ universeId, topic, message, data, receivedAt: now() });
    return answer(null, 200);
  });

  app.post("/_control/mode", async (c) => {
    const parsed = modeBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return c.json({ error: z.prettifyError(parsed.error) }, 400);
    const { mode, count, retryAfter } = parsed.data;
    if (mode === "normal") failures.clear();
    else failNext(mode, { count, retryAfter });
    const pending = failures.pending().map((s) => ({ mode: s.plan.failure, count: s.count }));
    return c.json({ pending });
  });
  app.post("/_control/keys", async (c) => {
    const parsed = keyBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return c.json({ error: z.prettifyError(parsed.error) }, 400);
    registerKey(parsed.data.apiKey, parsed.data.universeId);
    return c.json({ ok: true });
  });
  // `after=<n>`: only the messages after the first n; `wait=<seconds>` (at most 30): when there is
  // none yet, hold the answer until one comes or the time is up (a subscriber's long poll).
  app.get("/_inbox", async (c) => {
    const after = Number(c.req.query("after") ?? 0);
    const wait = Math.min(Number(c.req.query("wait") ?? 0), 30);
    if (!Number.isInteger(after) || after < 0 || !(wait >= 0)) {
      return c.json({ error: "after and wait must be non-negative numbers" }, 400);
    }
    if (messages.length <= after && wait > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, wait * 1_000);
        function done() {
          clearTimeout(timer);
          polls.delete(done);
          resolve();
        }
        polls.add(done);
      });
    }
    return c.json(messages.slice(after));
  });
  app.delete("/_inbox", (c) => {
    messages = [];
    return c.json({ ok: true });
  });
  app.get("/_inbox.html", (c) => c.html(renderInboxPage(messages)));
  app.get("/_attempts", (c) => c.json(attempts));
  app.get("/", (c) => c.redirect("/_inbox.html"));

  const server = await serveApp(app, options);
  return {
    url: server.url,
    registerKey,
    failNext,
    clearFailures: () => failures.clear(),
    inbox: () => [...messages],
    clearInbox: () => {
      messages = [];
    },
    waitForMessages,
    attempts: () => attempts.map((attempt) => ({ ...attempt })),
    clearAttempts: () => {
      attempts = [];
    },
    async close() {
      for (const waiter of waiters) {
        clearTimeout(waiter.timer);
        waiter.reject(new Error("Messaging stand-in closed"));
      }
      waiters = [];
      for (const release of hung) release();
      hung.clear();
      for (const poll of [...polls]) poll();
      await server.close();
    },
  };
}

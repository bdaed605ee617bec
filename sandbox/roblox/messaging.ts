// Stand-in for Roblox Open Cloud's universe endpoints, speaking the real protocol: publishing
// (POST /cloud/v2/universes/{id}:publishMessage), restarting servers (`:restartServers`) and the
// secrets API (`open_cloud_secrets.ts`), authorized by API key or by an OAuth access token of the
// OAuth stand-in; plus test controls under /_control and /_inbox.
import { type Context, Hono } from "hono";
import { z } from "zod";
import { type ListenOptions, serveApp } from "./_serve.ts";
import { type AccessTokenCheck, authorizeOpenCloud } from "./open_cloud_auth.ts";
import {
  addSecretsRoutes,
  createSecretsStore,
  openStoredSecret,
  secretsAuthProblem,
  type StoredSecret,
} from "./open_cloud_secrets.ts";
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
  /** How the request was authorized: `Authorization: Bearer` or `x-api-key`. */
  via: "oauth" | "api_key";
}

/** A `:restartServers` request the stand-in accepted. */
export interface ServerRestart {
  universeId: string;
  bleedOffServers: boolean;
  bleedOffDurationMinutes: number | null;
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
  /** Checks OAuth access tokens (the OAuth stand-in's `checkAccessToken`); without it only API keys work. */
  checkAccessToken?: AccessTokenCheck;
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
  /** Every `:restartServers` accepted, oldest first. */
  restarts(): ServerRestart[];
  /** The next `count` (default 1) `:restartServers` answer 500 and restart nothing. */
  failNextRestart(count?: number): void;
  /** The universe's stored secret opened with its private key; null when absent or unopenable. */
  openSecret(universeId: string, secretId: string): string | null;
  /** The universe's stored secrets as sent (sealed), by id. */
  secrets(universeId: string): StoredSecret[];
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

const restartBody = z.strictObject({
  placeIds: z.array(z.string().regex(/^\d+$/)).optional(),
  closeAllVersions: z.boolean().optional(),
  bleedOffServers: z.boolean().optional(),
  bleedOffDurationMinutes: z.int().min(1).max(60).optional(),
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
  const restarts: ServerRestart[] = [];
  const restartFailures = new Shots<true>();
  const secrets = await createSecretsStore(now);
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

  const sources = { keys, checkAccessToken: options.checkAccessToken };
  const credentials = (c: Context) => ({
    apiKey: c.req.header("x-api-key"),
    authorization: c.req.header("authorization"),
  });

  const app = new Hono();
  addSecretsRoutes(app, secrets, (c, scope) => {
    const universeId = c.req.param("universeId") ?? "";
    const caller = authorizeOpenCloud(credentials(c), { universeId, scope }, sources);
    return caller.ok ? caller.authorization : secretsAuthProblem(c, caller.status, caller.message);
  });

  app.post("/cloud/v2/universes/:target", async (c) => {
    const [, universeId, method] = /^([^:]+):(publishMessage|restartServers)$/.exec(
      c.req.param("target"),
    ) ?? [];
    if (universeId === undefined) return c.json({ code: "NOT_FOUND", message: "Not found" }, 404);
    if (method === "restartServers") return await restartServers(c, universeId);
    const via = /^Bearer /i.test(c.req.header("authorization") ?? "") ? "oauth" : "api_key";
    const attempt: PublishAttempt = { universeId, status: null, at: now(), via };
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

    const caller = authorizeOpenCloud(credentials(c), {
      universeId,
      scope: "universe-messaging-service:publish",
    }, sources);
    if (plan?.failure === "401" || (!caller.ok && caller.status === 401)) {
      const message = caller.ok ? "Invalid API Key" : caller.message;
      return answer({ errors: [{ code: 0, message }] }, 401);
    }
    if (!caller.ok) return answer({ code: "PERMISSION_DENIED", message: caller.message }, 403);

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

  async function restartServers(c: Context, universeId: string) {
    const caller = authorizeOpenCloud(
      credentials(c),
      { universeId, scope: "universe:write" },
      sources,
    );
    if (!caller.ok) {
      const code = caller.status === 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED";
      return c.json({ code, message: caller.message }, caller.status);
    }
    const parsed = restartBody.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) {
      return c.json({ code: "INVALID_ARGUMENT", message: z.prettifyError(parsed.error) }, 400);
    }
    if (restartFailures.take()) return c.json({ code: "INTERNAL", message: "Internal error" }, 500);
    restarts.push({
      universeId,
      bleedOffServers: parsed.data.bleedOffServers ?? false,
      bleedOffDurationMinutes: parsed.data.bleedOffDurationMinutes ?? null,
      at: now(),
    });
    return c.json({});
  }

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
  app.get("/_restarts", (c) => c.json(restarts));
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
    restarts: () => restarts.map((restart) => ({ ...restart })),
    failNextRestart: (count = 1) => restartFailures.add(true, count),
    openSecret: (universeId, secretId) => openStoredSecret(secrets, universeId, secretId),
    secrets: (universeId) =>
      [...secrets.universes.get(universeId)?.secrets.values() ?? []].map((s) => ({ ...s })),
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

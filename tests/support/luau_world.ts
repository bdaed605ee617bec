/**
 * The world the Luau SDK's suites run in (tests/v1/sdk_luau_test.ts): the sandbox cluster, the
 * messaging, memory store and OAuth stand-ins, and the real app with its job worker, served on a
 * real loopback port behind a thin "front". The front forwards every request to the app unchanged,
 * except that a suite can make the next requests (or the next ones to a path) fail on purpose (a
 * status, an error body, a lost answer, no answer at all) or wait (before the service sees them,
 * before their answer, or until the suite releases them); it logs each request and records every
 * JSON answer by route for the contract check. Its `/_test/` routes are the suites' hands in the
 * world: the real linking flow, a dashboard test ping, chain activity on a watched address, pausing
 * the chain.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { JobWorker } from "../../jobs/worker.ts";
import { createApiKey } from "../../kv/api_keys.ts";
import { savePolicy } from "../../lib/tx/request/policy.ts";
import type { Project } from "../../kv/projects.ts";
import { sendTestPing } from "../../lib/events/publish.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import { recordEvents } from "../../lib/events/record.ts";
import { addWatch } from "../../lib/watches/watches.ts";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { createFundedSigner, createMint, mintTo } from "../../sandbox/chain/fixtures.ts";
import { startChain } from "../../sandbox/chain/mod.ts";
import {
  type MessagingStandIn,
  startMessagingStandIn,
  startOauthStandIn,
} from "../../sandbox/roblox/mod.ts";
import {
  type MemoryStoreStandIn,
  startMemoryStoreStandIn,
} from "../../sandbox/roblox/memory_store.ts";
import {
  browse,
  CookieJar,
  createLinkProject,
  createTestWallet,
  linkWith,
  type LinkWorld,
  signInPlayer,
  type TestWallet,
} from "./sign_in.ts";
import { findOperation } from "./openapi_conformance.ts";
import { createTestApp, type TestApp } from "./test_app.ts";
import { testTiming } from "./tx_harness.ts";

const UNIVERSE = "9001";
const PUBLISH_KEY = "luau-test-publishing-key-0123456789";
const TOPIC = "svc";

/** What the Luau suites are told about the world (as BLOCKLINK_WORLD). */
export interface WorldInfo {
  baseUrl: string;
  messagingUrl: string;
  /** The game's MemoryStoreService (sandbox/roblox/memory_store.ts), for suites that use it. */
  memoryStoreUrl: string;
  universeId: string;
  publishingKey: string;
  topic: string;
  slug: string;
  walletAddress: string;
  mint: string;
  foreignMint: string;
  watchAddress: string;
  /** Fresh addresses nobody uses, one per purpose a suite may need. */
  addresses: string[];
}

/** One recorded answer: the route as the spec names it, its status and JSON body. */
export interface RecordedAnswer {
  route: string;
  status: number;
  body: unknown;
}

/** A request the front saw; `at` in seconds of a monotonic clock. */
interface LoggedRequest {
  method: string;
  path: string;
  at: number;
  status: number;
}

/** A planned failure (or delay) of the next request: see the file header. */
interface Fault {
  /** The answer's status; 0 with a delay and no `drop`: no failure, only the delay. */
  status: number;
  code?: string;
  /** Close the connection without an answer. */
  drop?: boolean;
  /** Let the service act, then lose its answer and send this fault instead. */
  forward?: boolean;
  /** Hold the request this long before the service sees it. */
  delayBeforeMs?: number;
  /** Hold the service's answer this long before sending it. */
  delayAfterMs?: number;
  /** Only for the next request whose path starts with this (any /v1 request by default). */
  path?: string;
}

/** A running world; `close()` stops everything it started. */
export interface LuauWorld extends AsyncDisposable {
  info: WorldInfo;
  apiKey: string;
  project: Project;
  standIn: MessagingStandIn;
  memoryStore: MemoryStoreStandIn;
  /** Every JSON answer of a /v1 route so far. */
  answers(): RecordedAnswer[];
  /** Every message the service published so far (not those the suites made up). */
  messages(): string[];
  /** The service's clock (Unix ms): it follows real time from a fixed start, not the wall clock. */
  serviceNow(): number;
  close(): Promise<void>;
}

/** The spec's name of a request's route (`GET /v1/players/:userId/wallet`), or null. */
function routeOf(method: string, path: string): string | null {
  // Only /v1 answers are the SDK's (the document also describes /health).
  const template = path.startsWith("/v1/") ? findOperation(method, path) : null;
  return template ? `${method} ${template.replace(/\{(\w+)\}/g, ":$1")}` : null;
}

/** Starts the world: cluster, stand-ins, app, a project with a funded wallet, a policy and a watch. */
export async function startLuauWorld(
  options: {
    topicLimitPerMinute?: number;
    users?: number;
    /** The project's event settings beyond universe and key (packing, messages a minute). */
    events?: { packEvents?: boolean; messagesPerMinute?: number };
  } = {},
): Promise<LuauWorld> {
  const chain = await startChain({ autoAdvance: false });
  let chainPaused = false;
  const slotTimer = setInterval(() => {
    if (!chainPaused) chain.advanceSlots(1);
  }, 10);
  const standIn = await startMessagingStandIn({
    keys: [{ apiKey: PUBLISH_KEY, universeId: UNIVERSE }],
    ...options,
  });
  // The game's concurrent users set its memory store budgets; a test's few players, 100 by default.
  const memoryStore = await startMemoryStoreStandIn({ users: options.users ?? 100 });
  const idp = await startOauthStandIn();
  for (let id = 2001; id <= 2060; id++) {
    idp.addUser({ id, username: `Player${id}`, displayName: `Player ${id}` });
  }
  const t: TestApp = await createTestApp({
    config: {
      rpcUrls: { devnet: chain.rpcUrl, mainnet: chain.rpcUrl },
      publishUrl: standIn.url,
      idpUrl: idp.idpUrl,
    },
  });
  t.ctx.tx.timing = testTiming({ confirmWaitMs: 1_500 });
  t.ctx.events.attemptTimeoutMs = 500;
  // The app's clock follows real time, so its background checks and polls come due on their own.
  let last = Date.now();
  const clockTimer = setInterval(() => {
    const now = Date.now();
    t.clock.advance(now - last);
    last = now;
  }, 20);
  const worker = new JobWorker(t.ctx, { owner: "luau", pollIntervalMs: 100 });
  worker.start();

  const linkWorld: LinkWorld = {
    t,
    app: t.app,
    clock: t.clock,
    idp,
    close: () => Promise.resolve(),
    [Symbol.asyncDispose]: () => Promise.resolve(),
  };
  const project = await createLinkProject(linkWorld, { name: "Luau Arena" });
  const { plaintext: apiKey } = await createApiKey(t.kv, project.id, t.clock.now());
  await saveEventSettings(t.ctx, project.id, {
    universeId: UNIVERSE,
    publishingKey: PUBLISH_KEY,
    ...options.events,
  });
  const walletAddress = await createProjectWallet(t.ctx, project.id) as Address;
  await chain.airdrop(walletAddress, 100_000_000_000n);
  const issuer = await createFundedSigner(chain);
  // A mint the managed wallet may mint (its authority) and transfer (it holds some).
  const mint = await createMint(chain, {
    payer: issuer,
    decimals: 2,
    mintAuthority: walletAddress,
  });
  const foreignMint = await createMint(chain, { payer: issuer, decimals: 0 });
  await mintTo(chain, {
    payer: issuer,
    mint: foreignMint,
    authority: issuer,
    owner: walletAddress,
    amount: 1_000n,
    decimals: 0,
  });
  await savePolicy(t.kv, project.id, {
    maxSolPerTransfer: "1",
    allowedMints: [{ mint, maxPerTransaction: "50" }, {
      mint: foreignMint,
      maxPerTransaction: "50",
    }],
    perRecipientPerHour: 3,
    perPlayerPerHour: null,
    hourlyBudgets: [],
  });
  const watchAddress = (await generateKeyPairSigner()).address;
  await addWatch(t.ctx, project.id, { name: "treasury", address: watchAddress });
  const addresses = await Promise.all(
    Array.from({ length: 24 }, async () => (await generateKeyPairSigner()).address),
  );

  const faults: Fault[] = [];
  // Paths whose requests wait until released (`hold`, `release`), for ordering a step after another.
  const holds = new Map<
    string,
    { hold: PromiseWithResolvers<void>; timer: ReturnType<typeof setTimeout> }
  >();
  const release = (path: string) => {
    const held = holds.get(path);
    if (!held) return;
    clearTimeout(held.timer);
    held.hold.resolve();
    holds.delete(path);
  };
  let log: LoggedRequest[] = [];
  const answers: RecordedAnswer[] = [];
  const jars = new Map<number, CookieJar>();
  const crafted = new Set<string>();

  const wallets = new Map<number, TestWallet>();

  /** Links a new wallet to the player, or the wallet `sameAs` linked last, through the linking flow. */
  async function linkPlayer(userId: number, sameAs?: number): Promise<string> {
    // Players beyond the suites' own (a bench's) get an account at the identity provider first.
    if (!jars.has(userId) && (userId < 2001 || userId > 2060)) {
      idp.addUser({ id: userId, username: `Player${userId}`, displayName: `Player ${userId}` });
    }
    const jar = jars.get(userId) ?? (await signInPlayer(linkWorld, project, userId)).jar;
    jars.set(userId, jar);
    const wallet = (sameAs ? wallets.get(sameAs) : undefined) ?? createTestWallet();
    wallets.set(userId, wallet);
    const res = await linkWith(linkWorld, project, jar, wallet);
    if (res.status !== 200) throw new Error(`Link failed: ${await res.text()}`);
    return wallet.address;
  }

  async function controls(req: Request, name: string): Promise<Response> {
    const input = req.method === "POST" ? await req.json().catch(() => ({})) : {};
    switch (`${req.method} ${name}`) {
      case "POST fail":
        for (let i = 0; i < (input.count ?? 1); i++) faults.push({ ...input });
        return Response.json({ queued: faults.length });
      case "POST hold":
        release(input.path);
        holds.set(input.path, {
          hold: Promise.withResolvers(),
          // A suite that fails before its release must not hold the next suites' requests.
          timer: setTimeout(() => release(input.path), 30_000),
        });
        return Response.json({ held: input.path });
      case "POST release":
        release(input.path);
        return Response.json({ released: input.path });
      case "GET requests":
        return Response.json(log);
      case "DELETE requests":
        log = [];
        return Response.json({ ok: true });
      case "POST link":
        return Response.json({ address: await linkPlayer(input.userId, input.sameAs) });
      case "POST unlink": {
        const jar = jars.get(input.userId);
        if (!jar) throw new Error(`Player ${input.userId} never signed in`);
        const res = await browse(t.app, `/api/link/${project.slug}/unlink`, {
          jar,
          method: "POST",
        });
        return Response.json(await res.json(), { status: res.status });
      }
      case "POST publish": {
        // A message a suite makes up (not the service's): sent like the service's, kept apart.
        crafted.add(input.message);
        const res = await fetch(`${standIn.url}/cloud/v2/universes/${UNIVERSE}:publishMessage`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": PUBLISH_KEY },
          body: JSON.stringify({ topic: input.topic ?? TOPIC, message: input.message }),
        });
        await res.body?.cancel();
        return Response.json({ status: res.status });
      }
      case "POST ping":
        return Response.json(await sendTestPing(t.ctx, project.id));
      case "POST watch-activity":
        return Response.json({
          signature: await chain.airdrop(watchAddress as Address, 1_000_000_000n),
        });
      case "POST event-settings":
        // Packing and the cap on messages a minute (null: none), for a suite's notice cases.
        await saveEventSettings(t.ctx, project.id, {
          packEvents: input.packEvents,
          messagesPerMinute: input.messagesPerMinute,
        });
        return Response.json({ ok: true });
      case "POST burst": {
        // `count` tx events recorded at once, as a round end settles its payouts (one commit).
        const events = Array.from({ length: input.count }, (_, i) => ({
          type: "tx" as const,
          key: `${input.prefix}-${i}`,
          kind: "transfer-sol" as const,
          status: "confirmed" as const,
          signature:
            "5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnbJLgp8uirBgmQpjKhoR4tjF3ZpRzrFmBV6UjKdiSZkQUW",
          userId: 1_000_000_000 + i,
          error: null,
        }));
        const recorded = await recordEvents(t.ctx, project.id, events);
        return Response.json({ first: recorded[0]?.id, last: recorded.at(-1)?.id });
      }
      case "POST chain":
        chainPaused = input.paused === true;
        return Response.json({ paused: chainPaused });
      default:
        return Response.json({ error: `No control ${name}` }, { status: 404 });
    }
  }

  /** The first planned fault for a request to `path`, taken off the list. */
  function takeFault(path: string): Fault | undefined {
    const index = faults.findIndex((fault) => !fault.path || path.startsWith(fault.path));
    return index < 0 ? undefined : faults.splice(index, 1)[0];
  }

  async function front(req: Request): Promise<Response> {
    const url = new URL(req.url);
    if (url.pathname.startsWith("/_test/")) return controls(req, url.pathname.slice(7));
    const entry: LoggedRequest = {
      method: req.method,
      path: url.pathname + url.search,
      at: performance.now() / 1000,
      status: 0,
    };
    log.push(entry);
    for (const [path, held] of holds) if (url.pathname.startsWith(path)) await held.hold.promise;
    const fault = url.pathname.startsWith("/v1/") ? takeFault(url.pathname) : undefined;
    if (fault?.delayBeforeMs) await sleep(fault.delayBeforeMs);
    if (fault?.drop) {
      // Headers go out, then the connection breaks: the client gets no complete answer.
      return new Response(
        new ReadableStream({
          start: (c) => c.error(new Error("Connection dropped on purpose by the test front")),
        }),
      );
    }
    const fails = fault !== undefined && fault.status !== 0;
    if (fault && fails && !fault.forward) return faultAnswer(entry, fault);
    const res = await t.app.fetch(req);
    if (fault?.delayAfterMs) await sleep(fault.delayAfterMs);
    if (fault && fails) return faultAnswer(entry, fault);
    entry.status = res.status;
    const route = routeOf(req.method, url.pathname);
    if (route && res.headers.get("content-type")?.startsWith("application/json")) {
      const body = await res.clone().json();
      answers.push({ route, status: res.status, body });
    }
    return res;
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, front);
  const close = async () => {
    for (const path of [...holds.keys()]) release(path);
    await server.shutdown();
    await worker.stop();
    clearInterval(clockTimer);
    clearInterval(slotTimer);
    await t.close();
    await idp.close();
    await standIn.close();
    await memoryStore.close();
    await chain.close();
  };
  return {
    info: {
      baseUrl: `http://127.0.0.1:${server.addr.port}`,
      messagingUrl: standIn.url,
      memoryStoreUrl: memoryStore.url,
      universeId: UNIVERSE,
      publishingKey: PUBLISH_KEY,
      topic: TOPIC,
      slug: project.slug,
      walletAddress,
      mint,
      foreignMint,
      watchAddress,
      addresses,
    },
    apiKey,
    project,
    standIn,
    memoryStore,
    answers: () => [...answers],
    messages: () => standIn.inbox().map((m) => m.message).filter((m) => !crafted.has(m)),
    serviceNow: () => t.clock.now(),
    close,
    [Symbol.asyncDispose]: close,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function faultAnswer(entry: LoggedRequest, fault: Fault): Response {
  entry.status = fault.status;
  if (!fault.code) {
    return new Response("Fault injected by the test front", { status: fault.status });
  }
  return Response.json({
    error: { code: fault.code, message: `Injected ${fault.code}` },
  }, { status: fault.status });
}

/** Runs scripts/luau_tools.sh with `args` (`["lune", "run", file]`); returns its exit code and output. */
export async function luauTools(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  const { code, stdout, stderr } = await new Deno.Command("sh", {
    args: ["scripts/luau_tools.sh", ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return { code, output: decoder.decode(stdout) + decoder.decode(stderr) };
}

/** Runs Lune with the Luau SDK's runner on `suites`; returns its exit code and output. */
export function runLuau(
  world: LuauWorld,
  rbxm: string,
  suites: string[],
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; output: string }> {
  return luauTools(["lune", "run", "sdk/luau/tests/run.luau", ...suites], {
    BLOCKLINK_WORLD: JSON.stringify(world.info),
    BLOCKLINK_RBXM: rbxm,
    SECRET_blocklink: world.apiKey,
    ...extraEnv,
  });
}

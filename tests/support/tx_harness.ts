/**
 * The transaction routes under test: the sandbox cluster, the real app (and its job worker) wired
 * to it, the messaging stand-in receiving `tx` events, and a project with a funded managed wallet.
 */
import assert from "node:assert/strict";
import {
  type Address,
  createSolanaRpc,
  generateKeyPairSigner,
  type Rpc,
  type SolanaRpcApi,
} from "@solana/kit";
import { JobWorker } from "../../jobs/worker.ts";
import type { ManualClock } from "../../core/clock.ts";
import type { Config } from "../../lib/config.ts";
import { saveEventSettings } from "../../lib/events/settings.ts";
import type { TxTiming } from "../../lib/tx/rpc/timing.ts";
import type { SignedTx } from "../../kv/tx_requests.ts";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { linkWallet } from "../../kv/links.ts";
import { savePolicy } from "../../lib/tx/request/policy.ts";
import { revokeProjectKey } from "../../lib/projects/keys.ts";
import type { Project } from "../../kv/projects.ts";
import { type SandboxChain, startChain } from "../../sandbox/chain/mod.ts";
import { createFundedSigner, createMint, mintTo } from "../../sandbox/chain/fixtures.ts";
import { type MessagingStandIn, startMessagingStandIn } from "../../sandbox/roblox/mod.ts";
import { call, createTestApp, createTestProject, type TestApp } from "./test_app.ts";
import { openTestStore, type TestStore } from "./remote_store.ts";

/** Universe and publishing key of the harness's project, which the stand-in accepts. */
export const UNIVERSE = "777";
export const PUBLISH_KEY = "tx-test-publishing-key-0123456789";

export type { TestStore };

/**
 * Registers the test `name` twice, its body run on a KV file and over KV Connect: the money
 * paths must hold on the store Deno Deploy gives as on a local one.
 */
export function onEachStore(
  name: string,
  body: (store: TestStore, t: Deno.TestContext) => Promise<void>,
): void {
  Deno.test(`${name} (on a KV file)`, (t) => body("file", t));
  Deno.test(`${name} (over KV Connect)`, (t) => body("remote", t));
}

/** Timing for tests: a short confirmation wait, quick polls; the background interval stays 1.5 s of the manual clock. */
export function testTiming(overrides: Partial<TxTiming> = {}): TxTiming {
  return {
    answerWithinMs: 10_000,
    confirmWaitMs: 3_000,
    routePollMs: 10,
    rebroadcastMs: 50,
    confirmIntervalMs: 1_500,
    abandonMarginMs: 5_000,
    rpcTimeoutMs: 3_000,
    ...overrides,
  };
}

/** One service instance with its worker (not started: tests drain it). */
export interface TxInstance extends TestApp {
  worker: JobWorker;
  /** POSTs a transaction route with the project's key. */
  post(kind: string, body: unknown): Promise<Response>;
  /** GETs the status route (the key is URL-encoded here). */
  status(key: string): Promise<Response>;
}

/** A running harness; `close()` stops everything it started. */
export interface TxHarness extends AsyncDisposable {
  chain: SandboxChain;
  rpc: Rpc<SolanaRpcApi>;
  standIn: MessagingStandIn;
  a: TxInstance;
  project: Project;
  apiKey: string;
  /** The project's managed wallet (null with `wallet: false`). */
  wallet: Address | null;
  /** The proxy every instance reaches the chain through (with `proxy: true`; otherwise reading it throws). */
  readonly proxy: HoldingProxy;
  /** The store every instance runs on (`kvPath`, or the one of `store`), else null. */
  kvPath: string | null;
  /** Opens another instance on the same store (needs `store` or `kvPath`). */
  instance(options?: { config?: Partial<Config>; rpcUrl?: string }): Promise<TxInstance>;
  /** Stops an instance as a crash would leave it: its worker and store handle are gone. */
  kill(instance: TxInstance): Promise<void>;
  /** Saves the project's policy through the dashboard's function. */
  policy(input: unknown): Promise<void>;
  /** Revokes the project's API key through the dashboard's function, on instance `a`. */
  revokeKey(): Promise<void>;
  /** Links a (new, unless given) wallet to the player; returns the address. */
  link(userId: number, address?: Address): Promise<Address>;
  /** Runs due jobs until none are left, then returns every `tx` event the stand-in received. */
  txEvents(): Promise<Array<Record<string, unknown>>>;
  /** Advances the manual clock past the next background check and runs due jobs. */
  backgroundCheck(): Promise<void>;
  close(): Promise<void>;
}

/** Options of `startTxHarness`. */
export interface TxHarnessOptions {
  /** Slots advance on their own every `slotMs` (default true, 10 ms). */
  autoAdvance?: boolean;
  slotMs?: number;
  cluster?: "devnet" | "mainnet";
  /** Create and fund the managed wallet (default true). */
  wallet?: boolean;
  /** Lamports airdropped to the wallet (default 100 SOL). */
  fund?: bigint;
  /** The store to run on (a KV Connect URL); `:memory:` unless given, or with `store`. */
  kvPath?: string;
  /** Run on a store other instances can open (`instance()`); removed at close. */
  store?: TestStore;
  config?: Partial<Config>;
  /** Put a `HoldingProxy` between the instances and the chain (default false). */
  proxy?: boolean;
  timing?: Partial<TxTiming>;
  /** The wallet address of the developer who owns the project (a placeholder by default). */
  developer?: string;
}

/** Starts the cluster, the stand-in and one instance with a project whose events are on. */
export async function startTxHarness(options: TxHarnessOptions = {}): Promise<TxHarness> {
  const chain = await startChain({
    autoAdvance: options.autoAdvance ?? true,
    slotMs: options.slotMs ?? 10,
  });
  const standIn = await startMessagingStandIn({
    keys: [{ apiKey: PUBLISH_KEY, universeId: UNIVERSE }],
  });
  const proxy = options.proxy ? startHoldingProxy(chain.rpcUrl) : null;
  const shared = options.store ? await openTestStore(options.store) : null;
  const kvPath = options.kvPath ?? shared?.path ?? null;
  const opened: TxInstance[] = [];
  // Every instance runs on the first one's clock, also once that one is killed.
  let clock: ManualClock | undefined;
  let apiKey = "";
  const open = async (extra: { config?: Partial<Config>; rpcUrl?: string } = {}) => {
    const rpcUrl = extra.rpcUrl ?? proxy?.url ?? chain.rpcUrl;
    const app = await createTestApp({
      kvPath: kvPath ?? undefined,
      clock,
      config: {
        rpcUrls: { devnet: rpcUrl, mainnet: rpcUrl },
        publishUrl: standIn.url,
        ...options.config,
        ...extra.config,
      },
    });
    clock ??= app.clock;
    app.ctx.tx.timing = testTiming(options.timing);
    app.ctx.events.attemptTimeoutMs = 500;
    const worker = new JobWorker(app.ctx, { owner: `w${opened.length}` });
    const instance: TxInstance = {
      ...app,
      worker,
      post: (kind, body) => call(app.app, `/v1/tx/${kind}`, { method: "POST", apiKey, json: body }),
      status: (key) => call(app.app, `/v1/tx/${encodeURIComponent(key)}`, { apiKey }),
    };
    opened.push(instance);
    return instance;
  };
  const a = await open();
  const created = await createTestProject(a, {
    cluster: options.cluster ?? "devnet",
    ...(options.developer ? { developer: options.developer } : {}),
  });
  apiKey = created.apiKey;
  const project = created.project;
  await saveEventSettings(a.ctx, project.id, { universeId: UNIVERSE, publishingKey: PUBLISH_KEY });
  let wallet: Address | null = null;
  if (options.wallet !== false) {
    wallet = (await createProjectWallet(a.ctx, project.id)) as Address;
    await chain.airdrop(wallet, options.fund ?? 100_000_000_000n);
    chain.advanceSlots(2);
  }
  const txEvents = async () => {
    for (let round = 0; round < 100; round++) {
      const ran = (await Promise.all(opened.map((i) => i.worker.runDue()))).reduce(
        (x, y) => x + y,
        0,
      );
      if (ran === 0) break;
    }
    return standIn.inbox()
      .map((m) => m.data as Record<string, unknown>)
      .filter((data) => data?.type === "tx");
  };
  const close = async () => {
    // First, so that no call is still held while the instances stop.
    await proxy?.close();
    for (const instance of opened.splice(0)) {
      await instance.worker.stop();
      await instance.close();
    }
    await standIn.close();
    await chain.close();
    await shared?.[Symbol.asyncDispose]();
  };
  return {
    chain,
    rpc: createSolanaRpc(chain.rpcUrl),
    standIn,
    a,
    project,
    apiKey,
    wallet,
    get proxy() {
      if (!proxy) throw new Error("The harness has no proxy: start it with `proxy: true`");
      return proxy;
    },
    kvPath,
    instance: open,
    kill: async (instance) => {
      const i = opened.indexOf(instance);
      if (i < 0) return;
      opened.splice(i, 1);
      await instance.worker.stop();
      await instance.close();
    },
    policy: async (input) => {
      await savePolicy(a.kv, project.id, input);
    },
    revokeKey: async () => {
      const keyId = (await a.ctx.apiKeys.resolve(apiKey))!.keyId;
      await revokeProjectKey(a.ctx, { developer: project.createdBy, projectId: project.id, keyId });
    },
    link: async (userId, address) => {
      const linked = address ?? (await generateKeyPairSigner()).address;
      await linkWallet(a.kv, project.id, { userId, address: linked, now: a.clock.now() });
      return linked;
    },
    txEvents,
    backgroundCheck: async () => {
      a.clock.advance(a.ctx.tx.timing.confirmWaitMs + a.ctx.tx.timing.confirmIntervalMs);
      await txEvents();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/**
 * Given for token payouts: a mint of another authority (6 decimals, the Token program unless
 * given) and 10 of its tokens in the managed wallet; returns the mint.
 */
export async function fundWalletWithTokens(
  h: TxHarness,
  options: { tokenProgram?: Address } = {},
): Promise<Address> {
  const issuer = await createFundedSigner(h.chain);
  const program = options.tokenProgram ? { tokenProgram: options.tokenProgram } : {};
  const mint = await createMint(h.chain, { payer: issuer, decimals: 6, ...program });
  await mintTo(h.chain, {
    payer: issuer,
    mint,
    authority: issuer,
    owner: h.wallet!,
    amount: 10_000_000n,
    decimals: 6,
    ...program,
  });
  return mint;
}

/** Height of the cluster's finalized block. */
export function finalizedHeight(h: TxHarness): number {
  const c = h.chain.clock();
  return c.blockHeight - (c.slot - c.finalizedSlot);
}

/** Moves the finalized chain `blocks` past a signed attempt's last valid block height. */
export function finalizePast(h: TxHarness, signed: SignedTx, blocks: number): void {
  h.chain.advanceSlots(Number(signed.lastValidBlockHeight) + blocks - finalizedHeight(h));
}

/** Lamports `to` holds at processed commitment. */
export async function balanceOf(h: TxHarness, to: Address): Promise<bigint> {
  return (await h.rpc.getBalance(to, { commitment: "processed" }).send()).value;
}

/** What a transaction route answered: the status of a 200, otherwise the error code. */
export async function outcomeOf(res: Response): Promise<string> {
  const body = await res.json();
  return res.status === 200 ? body.status : body.error.code;
}

/** How many times each outcome came. */
export function tally(outcomes: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
  return counts;
}

/** The JSON body of a 200 answer; any other status fails with the body in the message. */
export async function okJson(res: Response): Promise<Record<string, unknown>> {
  const body = await res.json();
  assert.equal(res.status, 200, JSON.stringify(body));
  return body;
}

/** Advances the cluster one slot every few milliseconds until `promise` settles; returns its value. */
export async function stepWhile<T>(chain: SandboxChain, promise: Promise<T>): Promise<T> {
  let done = false;
  const settled = promise.finally(() => (done = true));
  while (!done) {
    chain.advanceSlots(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return await settled;
}

/** The request a crash test sends: 1 SOL to player 21 under the key `crash`. */
export const CRASH_BODY = { to: { userId: 21 }, amount: "1", idempotencyKey: "crash" };

/** The request a crash test's doomed instance was serving when it was killed. */
interface KilledAttempt {
  /** What it was sent; its player is linked first. */
  body: { to: { userId: number }; amount: string; idempotencyKey: string };
  /** The RPC method whose call it was waiting on. */
  heldAt: string;
  /** Its other RPC calls reach the cluster (default: a dead port, so none do). */
  reachesChain?: boolean;
  /** Runs on the harness just before the doomed instance opens. */
  before?: (h: TxHarness) => Promise<void>;
  /** Sent as the one item of a batch (reserved before its transaction is built) instead of alone. */
  inBatch?: boolean;
}

/** What a crash test gets besides the harness. */
interface DeadRequest {
  /** The linked player's wallet. */
  to: Address;
  /** Releases the held call and waits for the dead request's end. */
  settle(): Promise<void>;
}

/**
 * Given for the crash tests: on a harness over `store` (a KV file unless given), a second
 * instance serves `attempt.body` through a proxy, hangs on its `attempt.heldAt` call, and is
 * killed. The proxy and the store are removed after `then`.
 */
export async function withKilledAttempt(
  attempt: KilledAttempt,
  then: (h: TxHarness, dead: DeadRequest) => Promise<void>,
  store: TestStore = "file",
): Promise<void> {
  await using h = await startTxHarness({ store });
  await using proxy = startHoldingProxy(
    attempt.reachesChain ? h.chain.rpcUrl : "http://127.0.0.1:9",
  );
  await h.policy({ maxSolPerTransfer: "5" });
  const to = await h.link(attempt.body.to.userId);
  await attempt.before?.(h);
  const doomed = await h.instance({ rpcUrl: proxy.url });
  const held = proxy.hold(attempt.heldAt);
  const inFlight =
    (attempt.inBatch
      ? doomed.post("batch", { items: [{ kind: "transfer-sol", ...attempt.body }] })
      : doomed.post("transfer-sol", attempt.body)).catch((error) => error);
  await held.arrived;
  await h.kill(doomed);
  await then(h, {
    to,
    settle: async () => {
      proxy.release();
      await inFlight;
    },
  });
}

/**
 * `CRASH_BODY` as a batch's item held at its blockhash: the instance reserved the key and died
 * before it could sign (a single request signs before it reserves, so it cannot die there).
 */
export async function withAttemptKilledBeforeSigning(
  then: (h: TxHarness, settleDeadRequest: () => Promise<void>) => Promise<void>,
  store: TestStore = "file",
): Promise<void> {
  await withKilledAttempt(
    { body: CRASH_BODY, heldAt: "getLatestBlockhash", inBatch: true },
    (h, dead) => then(h, dead.settle),
    store,
  );
}

/** A loopback JSON-RPC proxy in front of the cluster that can hold every call of chosen methods. */
export interface HoldingProxy extends AsyncDisposable {
  url: string;
  /** Holds calls of `method` until `release()`; `arrived` resolves when the first one comes. */
  hold(method: string): { arrived: Promise<void> };
  /** Answers every held call with HTTP 503 (with `forward`, passes them on instead), and stops holding. */
  release(options?: { forward?: boolean }): void;
  /** Answers the next `count` calls of `method` with HTTP 503 without forwarding them. */
  failNext(method: string, count: number): void;
  /** Forwards the next `count` calls of `method`, then answers `error` instead (a lying node). */
  lieNext(method: string, count: number, error: JsonRpcError): void;
  /** Forwards the next `count` calls of `method`, then answers HTTP 503: the answer is lost. */
  loseAnswerNext(method: string, count: number): void;
  /** Passes every answer of `method` through `change` (a node that lies); null stops it. */
  rewrite(method: string, change: ((answer: { result?: unknown }) => void) | null): void;
  /** Calls seen per method. */
  counts(): Record<string, number>;
  /** When each call of `method` arrived (`performance.now()`), in order. */
  callTimes(method: string): number[];
  close(): Promise<void>;
}

/** A JSON-RPC error object as a node answers it. */
export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** Starts a proxy to `target` on a free port. */
export function startHoldingProxy(target: string): HoldingProxy {
  const holds = new Map<string, () => void>();
  const failures = new Map<string, number>();
  const lies = new Map<string, { count: number; error: JsonRpcError }>();
  const losses = new Map<string, number>();
  const rewrites = new Map<string, (answer: { result?: unknown }) => void>();
  const counts: Record<string, number> = {};
  const times = new Map<string, number[]>();
  const gate = Promise.withResolvers<void>();
  let released = false;
  let forwardHeld = false;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.text();
    let method = "";
    let id: unknown = null;
    try {
      ({ method = "", id = null } = JSON.parse(body));
    } catch {
      // Forwarded as it is.
    }
    counts[method] = (counts[method] ?? 0) + 1;
    times.set(method, [...times.get(method) ?? [], performance.now()]);
    const failing = failures.get(method) ?? 0;
    if (failing > 0) {
      failures.set(method, failing - 1);
      return new Response("unavailable", { status: 503 });
    }
    const arrived = holds.get(method);
    if (arrived && !released) {
      arrived();
      await gate.promise;
      if (!forwardHeld) return new Response("held", { status: 503 });
    }
    const upstream = await fetch(target, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    const losing = losses.get(method) ?? 0;
    if (losing > 0) {
      losses.set(method, losing - 1);
      await upstream.body?.cancel();
      return new Response("answer lost", { status: 503 });
    }
    const lie = lies.get(method);
    if (lie && lie.count > 0) {
      lie.count--;
      await upstream.body?.cancel();
      return Response.json({ jsonrpc: "2.0", id, error: lie.error });
    }
    const change = rewrites.get(method);
    if (change && upstream.ok) {
      const answer = await upstream.json();
      change(answer);
      return Response.json(answer);
    }
    return new Response(await upstream.arrayBuffer(), {
      status: upstream.status,
      headers: { "content-type": "application/json" },
    });
  });
  const release = (options: { forward?: boolean } = {}) => {
    released = true;
    forwardHeld = options.forward === true;
    gate.resolve();
  };
  const close = async () => {
    release();
    await server.shutdown();
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    hold(method) {
      const arrived = Promise.withResolvers<void>();
      holds.set(method, arrived.resolve);
      return { arrived: arrived.promise };
    },
    release,
    failNext: (method, count) => failures.set(method, count),
    lieNext: (method, count, error) => lies.set(method, { count, error }),
    loseAnswerNext: (method, count) => losses.set(method, count),
    rewrite: (method, change) => change ? rewrites.set(method, change) : rewrites.delete(method),
    counts: () => ({ ...counts }),
    callTimes: (method) => [...times.get(method) ?? []],
    close,
    [Symbol.asyncDispose]: close,
  };
}

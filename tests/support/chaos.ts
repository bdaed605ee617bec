/**
 * The chaos run of the money path: rounds of concurrent payouts with unique recipients against
 * the service as a real process, reaching the cluster through a misbehaving RPC node
 * (`rpc_fault_proxy.ts`) while the cluster misbehaves too (`chaos_profiles.ts`), killed with
 * SIGKILL at a random moment and restarted on the same store. Each client resends its key and
 * body as a retrying client does (no answer, a 5xx, `rate_limited`, and a `failed` answer too,
 * which the spec allows to retry). Then the faults stop, the truth is visible again, and the chain
 * judges: no recipient paid twice, no `failed` key that moved money, no key left unsettled, no
 * answer the chain contradicts, no answer later than the route's deadline. The faults, kill times
 * and amounts are drawn from a seed, so a run can be repeated. Used by `tests/tx/chaos_test.ts`
 * (short) and `deno task chaos` (long).
 */
import { type Address, createSolanaRpc, generateKeyPairSigner, type Signature } from "@solana/kit";
import { createAppContext } from "../../lib/context.ts";
import { createProjectWallet } from "../../lib/projects/wallet.ts";
import { createApiKey } from "../../kv/api_keys.ts";
import { openKv } from "../../kv/open_kv.ts";
import { savePolicy } from "../../lib/tx/request/policy.ts";
import { createProject } from "../../kv/projects.ts";
import { type SandboxChain, startChain } from "../../sandbox/chain/mod.ts";
import { testConfig } from "./test_app.ts";
import { seededRandom, startRpcFaultProxy } from "./rpc_fault_proxy.ts";
import { profileOf, timingOf } from "./chaos_profiles.ts";
import { type ServiceProcess, startServiceProcess } from "./service_runner.ts";
import { openTestStore, type TestStore } from "./remote_store.ts";

/** Options of a chaos run. */
export interface ChaosOptions {
  rounds: number;
  /** Concurrent payouts per round before the kill (default 4); half as many more come after it. */
  payouts?: number;
  /** Draws every fault, kill time and proxy decision (default 1). */
  seed?: number;
  /** The store the service runs on (default a KV file; `"remote"`: over KV Connect). */
  store?: TestStore;
  /** Called after each round with the totals so far. */
  onRound?: (stats: ChaosStats, profile: string) => void;
}

/** What a chaos run counted. */
export interface ChaosStats {
  seed: number;
  rounds: number;
  requests: number;
  kills: number;
  confirmed: number;
  failed: number;
  /** Recipients holding more than one payment. */
  doublePayments: number;
  /** Keys `failed` while their recipient holds money, or a `failed` answer whose attempt landed. */
  failedThatPaid: number;
  /** Keys still `pending` or `submitted` once the truth was visible again for its expiry plus a sweep. */
  stuckAttempts: number;
  /** Answers the chain contradicts: a `confirmed` later changed, a landed attempt not the key's. */
  contradictedAnswers: number;
  /** Transaction answers received later than the round's answer deadline after sending. */
  lateAnswers: number;
  /** The slowest transaction answer, in ms, and the deadline it had. */
  slowestAnswer: { ms: number; deadlineMs: number; profile: string };
  /** Every transaction answer's time, in ms, in the order received. */
  answerMs: number[];
  /** Requests whose connection the kill cut (they were resent like every other). */
  cutByKill: number;
  /** Resends of keys answered `failed` (each starts a new attempt). */
  failedResent: number;
  /** Failed keys by error. */
  failedBy: Record<string, number>;
  /** Rounds run per profile. */
  profiles: Record<string, number>;
  /** What the RPC node did. */
  rpcFaults: Record<string, number>;
}

const SECRET = "chaos-secret-chaos-secret-chaos-secret-01";
const AMOUNT = "0.002";
const AMOUNT_LAMPORTS = 2_000_000n;
const SLOT_MS = 50;
// Once the truth is visible: a blockhash's expiry proof (150 blocks + 32 of margin + 32 of
// finalization) plus one sweep, plus the time to answer.
const SETTLE_WITHIN_MS = (150 + 33 + 32) * SLOT_MS + 30_000 + 5_000;
// A project may count 1,000 transactions a day; a new project takes over well before that.
const PAYOUTS_PER_PROJECT = 500;
// A `failed` key is resent at most this many times (each resend is a new attempt).
const MAX_FAILED_RESENDS = 2;

/** One payout of a round, as its client saw it. */
interface Payout {
  key: string;
  to: Address;
  /** Every answer the client got (TxResults), in order. */
  answers: Record<string, unknown>[];
  cut: boolean;
  failedResends: number;
}

/** Runs the chaos rounds; returns the totals. */
export async function runChaos(options: ChaosOptions): Promise<ChaosStats> {
  const seed = options.seed ?? 1;
  const random = seededRandom(seed);
  const stats: ChaosStats = {
    seed,
    rounds: 0,
    requests: 0,
    kills: 0,
    confirmed: 0,
    failed: 0,
    doublePayments: 0,
    failedThatPaid: 0,
    stuckAttempts: 0,
    contradictedAnswers: 0,
    lateAnswers: 0,
    slowestAnswer: { ms: 0, deadlineMs: 0, profile: "" },
    answerMs: [],
    cutByKill: 0,
    failedResent: 0,
    failedBy: {},
    profiles: {},
    rpcFaults: {},
  };
  const before = options.payouts ?? 4;
  const perRound = before + Math.ceil(before / 2);
  const projectCount = Math.ceil((options.rounds * perRound * 3) / PAYOUTS_PER_PROJECT);
  const chain = await startChain({ slotMs: SLOT_MS });
  const proxy = startRpcFaultProxy(chain.rpcUrl, { seed });
  const store = await openTestStore(options.store ?? "file");
  const kvPath = store.path;
  const rpc = createSolanaRpc(chain.rpcUrl);
  let service: ServiceProcess | null = null;
  try {
    const apiKeys = await setUp(chain, kvPath, projectCount, perRound * options.rounds);
    for (let round = 0; round < options.rounds; round++) {
      const profile = profileOf(round);
      const timing = timingOf(profile);
      const apiKey = apiKeys[Math.floor((round * perRound * 3) / PAYOUTS_PER_PROJECT)];
      if (!apiKey) throw new Error(`No API key set up for round ${round}`);
      const client = new ChaosClient(apiKey, timing.answerWithinMs!, profile.name, stats);
      await service?.kill();
      service = await startChaosService(proxy.url, kvPath, timing);
      const payouts = await newPayouts(round, perRound);
      const [first, second] = [payouts.slice(0, before), payouts.slice(before)];

      // When: the faults are armed, payouts go out, and the service dies at a random moment
      proxy.set(profile.rpc);
      profile.chain?.(chain);
      const sends = first.map((p) => client.sendOnce(service!.url, p));
      await sleep(random() * profile.killWithinMs);
      if (profile.jumpSlots) chain.advanceSlots(profile.jumpSlots);
      await service.kill();
      stats.kills++;
      await Promise.all(sends);

      // And it restarts on the same store while the faults go on; every client resends its key,
      // and more payouts arrive
      service = await startChaosService(proxy.url, kvPath, timing);
      const url = service.url;
      await Promise.all([
        ...first.map((p) => client.follow(url, p, { forMs: profile.faultyMs })),
        ...second.map((p) => client.follow(url, p, { forMs: profile.faultyMs })),
      ]);

      // And then the node and the cluster show the truth again
      proxy.clear();
      chain.faults.clear();
      const started = performance.now();
      const finals = await Promise.all(payouts.map(async (p) => {
        let final = await client.resend(url, p);
        while (!isFinal(final) && performance.now() - started < SETTLE_WITHIN_MS) {
          await sleep(500);
          final = await client.status(url, p) ?? final;
        }
        return { p, final };
      }));

      // Then: the chain judges every key and every answer
      await sleep(10 * SLOT_MS);
      for (const { p, final } of finals) await judge(rpc, stats, p, final);
      stats.rounds++;
      stats.profiles[profile.name] = (stats.profiles[profile.name] ?? 0) + 1;
      stats.rpcFaults = { ...proxy.stats() };
      options.onRound?.(structuredClone(stats), profile.name);
    }
  } finally {
    await service?.kill();
    await proxy.close();
    await chain.close();
    await store[Symbol.asyncDispose]();
  }
  return stats;
}

/** The round's payouts, each to a new address under a new key. */
function newPayouts(round: number, count: number): Promise<Payout[]> {
  return Promise.all(Array.from({ length: count }, async (_, i) => ({
    key: `round-${round}-${i}`,
    to: (await generateKeyPairSigner()).address,
    answers: [],
    cut: false,
    failedResends: 0,
  })));
}

/** Holds the client's rules: what it resends, and how it times its answers. */
class ChaosClient {
  constructor(
    readonly apiKey: string,
    readonly deadlineMs: number,
    readonly profile: string,
    readonly stats: ChaosStats,
  ) {}

  /** The first send, which the kill may cut. */
  async sendOnce(url: string, p: Payout): Promise<void> {
    const answer = await this.#post(url, p).catch(() => null);
    if (answer === null) p.cut = true;
  }

  /** Resends until answered, then polls, resending a `failed` key, for `forMs`. */
  async follow(url: string, p: Payout, options: { forMs: number }): Promise<void> {
    const end = performance.now() + options.forMs;
    let result = await this.resend(url, p);
    while (performance.now() < end) {
      if (result?.status === "confirmed") return;
      if (result?.status === "failed") {
        if (p.failedResends >= MAX_FAILED_RESENDS) return;
        p.failedResends++;
        this.stats.failedResent++;
        result = await this.resend(url, p);
        continue;
      }
      await sleep(500);
      result = await this.status(url, p) ?? result;
    }
  }

  /**
   * Resends the request with its key until the service answers it: no answer, a 5xx and 429
   * `rate_limited` are retried, as the spec's client guidance says. Returns the TxResult.
   */
  async resend(url: string, p: Payout): Promise<Record<string, unknown> | null> {
    for (let i = 0; i < 40; i++) {
      const answer = await this.#post(url, p).catch(() => null);
      if (answer?.ok) return answer.body;
      if (answer && !answer.retried) {
        throw new Error(`Resend of ${p.key}: ${JSON.stringify(answer.body)}`);
      }
      await sleep(250);
    }
    return null;
  }

  /** The status route's TxResult (recorded as an answer), or null without an answer. */
  async status(url: string, p: Payout): Promise<Record<string, unknown> | null> {
    try {
      const res = await fetch(`${url}/v1/tx/${encodeURIComponent(p.key)}`, {
        headers: { "x-api-key": this.apiKey },
      });
      if (res.status !== 200) return (await res.body?.cancel(), null);
      const body = await res.json();
      p.answers.push(body);
      return body;
    } catch {
      return null;
    }
  }

  /** One POST; records a TxResult answer and its time. Throws without an answer. */
  async #post(
    url: string,
    p: Payout,
  ): Promise<{ ok: boolean; retried: boolean; body: Record<string, unknown> }> {
    const started = performance.now();
    const res = await fetch(`${url}/v1/tx/transfer-sol`, {
      method: "POST",
      headers: { "x-api-key": this.apiKey, "content-type": "application/json" },
      body: JSON.stringify({ to: { address: p.to }, amount: AMOUNT, idempotencyKey: p.key }),
    });
    const body = await res.json();
    const ms = performance.now() - started;
    this.stats.answerMs.push(Math.round(ms));
    const slowest = this.stats.slowestAnswer;
    if (ms > slowest.ms) {
      this.stats.slowestAnswer = {
        ms: Math.round(ms),
        deadlineMs: this.deadlineMs,
        profile: this.profile,
      };
    }
    if (ms > this.deadlineMs) {
      this.stats.lateAnswers++;
      console.error(`Late answer: ${p.key} after ${Math.round(ms)} ms (${this.profile})`);
    }
    if (res.status === 200) p.answers.push(body);
    const retried = res.status >= 500 || body?.error?.code === "rate_limited";
    return { ok: res.status === 200, retried, body };
  }
}

/** Holds one key against the chain: its balance, its final state and every answer given. */
async function judge(
  rpc: ReturnType<typeof createSolanaRpc>,
  stats: ChaosStats,
  p: Payout,
  final: Record<string, unknown> | null,
): Promise<void> {
  const balance = (await rpc.getBalance(p.to, { commitment: "processed" }).send()).value;
  stats.requests++;
  if (p.cut) stats.cutByKill++;
  if (balance > AMOUNT_LAMPORTS) {
    stats.doublePayments++;
    console.error(`Paid twice: ${p.key} holds ${balance}`);
  }
  if (final?.status === "confirmed") {
    stats.confirmed++;
    if (balance < AMOUNT_LAMPORTS) {
      stats.contradictedAnswers++;
      console.error(`Confirmed without its payment: ${p.key} holds ${balance}`);
    }
  } else if (final?.status === "failed") {
    stats.failed++;
    const error = String(final.error).slice(0, 60);
    stats.failedBy[error] = (stats.failedBy[error] ?? 0) + 1;
    if (balance !== 0n) {
      stats.failedThatPaid++;
      console.error(`Failed but paid: ${p.key} ${JSON.stringify(final)} holds ${balance}`);
    }
  } else {
    stats.stuckAttempts++;
    console.error(`Stuck: ${p.key} ${JSON.stringify(final)}`);
  }
  // Every signature an answer named: the one that landed must be the key's confirmed one.
  const signatures = [
    ...new Set(p.answers.map((a) => a.signature).filter((s): s is string => typeof s === "string")),
  ];
  if (!signatures.length) return;
  const { value } = await rpc.getSignatureStatuses(signatures as Signature[], {
    searchTransactionHistory: true,
  }).send();
  signatures.forEach((signature, i) => {
    const status = value[i];
    if (!status || status.err !== null) return;
    const answeredFailed = p.answers.some((a) =>
      a.signature === signature && a.status === "failed"
    );
    if (answeredFailed) {
      stats.failedThatPaid++;
      console.error(`A failed answer whose attempt landed: ${p.key} ${signature}`);
    }
    if (final?.status !== "confirmed" || final.signature !== signature) {
      stats.contradictedAnswers++;
      console.error(
        `Landed attempt is not the key's: ${p.key} ${signature} ${JSON.stringify(final)}`,
      );
    }
  });
  const confirmed = p.answers.find((a) => a.status === "confirmed");
  if (confirmed && (final?.status !== "confirmed" || final.signature !== confirmed.signature)) {
    stats.contradictedAnswers++;
    console.error(`A confirmed answer changed: ${p.key} ${JSON.stringify(final)}`);
  }
}

/** Creates the projects (one funded managed wallet each) before the service opens the store. */
async function setUp(
  chain: SandboxChain,
  kvPath: string,
  projects: number,
  payouts: number,
): Promise<string[]> {
  const kv = await openKv(kvPath);
  try {
    const ctx = await createAppContext({ kv, config: testConfig({ secret: SECRET, kvPath }) });
    const keys: string[] = [];
    for (let i = 0; i < projects; i++) {
      const project = await createProject(kv, {
        name: `Chaos ${i}`,
        cluster: "devnet",
        // A developer owns at most 5 projects: each project has its own.
        createdBy: (await generateKeyPairSigner()).address,
        now: Date.now(),
      });
      keys.push((await createApiKey(kv, project.id, Date.now())).plaintext);
      await savePolicy(kv, project.id, { maxSolPerTransfer: "1" });
      const wallet = await createProjectWallet(ctx, project.id) as Address;
      const share = BigInt(Math.ceil((payouts * (1 + MAX_FAILED_RESENDS)) / projects) + 10);
      await chain.airdrop(wallet, share * (AMOUNT_LAMPORTS + 100_000n) + 1_000_000_000n);
    }
    return keys;
  } finally {
    kv.close();
  }
}

function startChaosService(
  rpcUrl: string,
  kvPath: string,
  timing: ReturnType<typeof timingOf>,
): Promise<ServiceProcess> {
  return startServiceProcess({
    KV_PATH: kvPath,
    SECRET,
    RPC_URL_DEVNET: rpcUrl,
    RPC_URL_MAINNET: rpcUrl,
    PUBLISH_URL: "http://127.0.0.1:9",
    IDP_URL: "http://127.0.0.1:9/oauth",
    TX_TIMING: JSON.stringify(timing),
  });
}

function isFinal(result: Record<string, unknown> | null): boolean {
  return result?.status === "confirmed" || result?.status === "failed";
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The run's totals as the chaos task and the bench print them. */
export function chaosSummary(stats: ChaosStats, minutes: number): string {
  const sorted = [...stats.answerMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;
  const slowest = stats.slowestAnswer;
  return [
    `Chaos run: ${minutes.toFixed(1)} min, seed ${stats.seed}`,
    `  rounds                 ${stats.rounds} ${JSON.stringify(stats.profiles)}`,
    `  requests               ${stats.requests}`,
    `  kills                  ${stats.kills}`,
    `  confirmed              ${stats.confirmed}`,
    `  failed                 ${stats.failed}`,
    `  paid twice             ${stats.doublePayments}`,
    `  failed that paid       ${stats.failedThatPaid}`,
    `  stuck attempts         ${stats.stuckAttempts}`,
    `  contradicted answers   ${stats.contradictedAnswers}`,
    `  late answers           ${stats.lateAnswers}`,
    `  answer time            p50 ${at(0.5)} ms, p99 ${at(0.99)} ms of ${sorted.length} answers`,
    `  slowest answer         ${slowest.ms} ms of ${slowest.deadlineMs} ms (${slowest.profile})`,
    `  cut by a kill, resent  ${stats.cutByKill}; failed keys resent: ${stats.failedResent}`,
    `  failed by error        ${JSON.stringify(stats.failedBy)}`,
    `  RPC faults             ${JSON.stringify(stats.rpcFaults)}`,
  ].join("\n");
}

/** Double payments, failed keys that paid, stuck keys, contradicted and late answers. */
export function chaosViolations(stats: ChaosStats): number {
  return stats.doublePayments + stats.failedThatPaid + stats.stuckAttempts +
    stats.contradictedAnswers + stats.lateAnswers;
}

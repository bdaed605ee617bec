/**
 * The chaos run of the money path: rounds of concurrent payouts with unique recipients against
 * the service as a real process, killed with SIGKILL at a random moment, restarted on the same
 * store, every request resent with its key. Then every recipient must hold the amount once if its
 * key is `confirmed` and nothing if `failed`, and no key may stay unsettled past its expiry plus
 * one sweep. Used by `tests/tx/chaos_test.ts` (short) and `deno task chaos` (long).
 */
import { type Address, createSolanaRpc, generateKeyPairSigner } from "@solana/kit";
import { createAppContext } from "../../lib/context.ts";
import { createProjectWallet } from "../../lib/wallets/project_wallet.ts";
import type { TxTiming } from "../../lib/tx/timing.ts";
import { createApiKey } from "../../kv/api_keys.ts";
import { openKv } from "../../kv/open_kv.ts";
import { savePolicy } from "../../lib/tx/policy.ts";
import { createProject } from "../../kv/projects.ts";
import { type SandboxChain, startChain } from "../../sandbox/chain/mod.ts";
import { testConfig } from "./test_app.ts";
import { type ServiceProcess, startServiceProcess } from "./service_runner.ts";

/** Options of a chaos run. */
export interface ChaosOptions {
  rounds: number;
  /** Concurrent payouts per round (default 4). */
  payouts?: number;
  /** The kill comes at a random moment within this many ms of the round's first send (default 400). */
  killWithinMs?: number;
  /** Called after each round with the totals so far. */
  onRound?: (stats: ChaosStats) => void;
}

/** What a chaos run counted. */
export interface ChaosStats {
  rounds: number;
  requests: number;
  kills: number;
  confirmed: number;
  failed: number;
  /** Recipients holding more than one payment, or a payment while their key says `failed`. */
  doublePayments: number;
  /** Answers given before a kill that the key contradicted afterwards (unknown key, other state). */
  lostAcknowledgements: number;
  /** Keys still `pending` or `submitted` past their expiry plus one sweep. */
  stuckAttempts: number;
  /** Requests whose connection the kill cut (they were resent like every other). */
  cutByKill: number;
  /** Failed keys by error. */
  failedBy: Record<string, number>;
}

const SECRET = "chaos-secret-chaos-secret-chaos-secret-01";
const AMOUNT = "0.002";
const AMOUNT_LAMPORTS = 2_000_000n;
const SLOT_MS = 50;
// Short waits so a round ends in seconds; every rule keeps its shape (deadline, wait, sign-by).
const TIMING: Partial<TxTiming> = {
  answerWithinMs: 3_000,
  confirmWaitMs: 1_500,
  routePollMs: 100,
  rebroadcastMs: 500,
  abandonMarginMs: 500,
  rpcTimeoutMs: 2_000,
};
// Past a blockhash's expiry proof (150 blocks + 32 of margin + 32 of finalization) plus one sweep.
const SETTLE_WITHIN_MS = TIMING.answerWithinMs! + TIMING.abandonMarginMs! +
  (150 + 33 + 32) * SLOT_MS + 30_000 + 5_000;
// A project may count 1,000 transactions a day; a new project takes over well before that.
const PAYOUTS_PER_PROJECT = 600;

interface Payout {
  key: string;
  to: Address;
  /** The answer received before the kill, if any. */
  acknowledged: Record<string, unknown> | null;
  cut: boolean;
}

/** Runs the chaos rounds; returns the totals. */
export async function runChaos(options: ChaosOptions): Promise<ChaosStats> {
  const stats: ChaosStats = {
    rounds: 0,
    requests: 0,
    kills: 0,
    confirmed: 0,
    failed: 0,
    doublePayments: 0,
    lostAcknowledgements: 0,
    stuckAttempts: 0,
    cutByKill: 0,
    failedBy: {},
  };
  const perRound = options.payouts ?? 4;
  const projectCount = Math.ceil((options.rounds * perRound) / PAYOUTS_PER_PROJECT);
  const chain = await startChain({ slotMs: SLOT_MS });
  const kvPath = await Deno.makeTempFile({ suffix: ".kv" });
  let service: ServiceProcess | null = null;
  try {
    const apiKeys = await setUp(chain, kvPath, projectCount, perRound * options.rounds);
    const rpc = createSolanaRpc(chain.rpcUrl);
    service = await startChaosService(chain, kvPath);
    for (let round = 0; round < options.rounds; round++) {
      const apiKey = apiKeys[Math.floor((round * perRound) / PAYOUTS_PER_PROJECT)];
      if (!apiKey) throw new Error(`No API key set up for round ${round}`);
      const payouts: Payout[] = await Promise.all(
        Array.from({ length: perRound }, async (_, i) => ({
          key: `round-${round}-${i}`,
          to: (await generateKeyPairSigner()).address,
          acknowledged: null,
          cut: false,
        })),
      );
      // When: concurrent payouts, and the process dies at a random moment
      const sends = payouts.map(async (p) => {
        try {
          const res = await post(service!.url, apiKey, p);
          const body = await res.json();
          if (res.status === 200) p.acknowledged = body;
        } catch {
          p.cut = true;
        }
      });
      await new Promise((resolve) =>
        setTimeout(resolve, Math.random() * (options.killWithinMs ?? 400))
      );
      await service.kill();
      stats.kills++;
      await Promise.all(sends);
      // And it restarts on the same store, and every request is resent with its key
      service = await startChaosService(chain, kvPath);
      const started = performance.now();
      const finals = await Promise.all(payouts.map(async (p) => {
        let result = await resend(service!.url, apiKey, p);
        while (!isFinal(result) && performance.now() - started < SETTLE_WITHIN_MS) {
          await new Promise((resolve) => setTimeout(resolve, 500));
          result = await status(service!.url, apiKey, p.key) ?? result;
        }
        return { p, final: result };
      }));
      // Then: balances match the final statuses, nothing stuck, no answer contradicted
      await new Promise((resolve) => setTimeout(resolve, 10 * SLOT_MS));
      for (const { p, final } of finals) {
        const balance = (await rpc.getBalance(p.to, { commitment: "processed" }).send()).value;
        stats.requests++;
        if (p.cut) stats.cutByKill++;
        if (final?.status === "confirmed") {
          stats.confirmed++;
          if (balance !== AMOUNT_LAMPORTS) stats.doublePayments++;
        } else if (final?.status === "failed") {
          stats.failed++;
          const error = String(final.error).slice(0, 60);
          stats.failedBy[error] = (stats.failedBy[error] ?? 0) + 1;
          if (balance !== 0n) stats.doublePayments++;
        } else {
          stats.stuckAttempts++;
          console.error(`Stuck: ${p.key} ${JSON.stringify(final)}`);
        }
        if (contradicts(p.acknowledged, final)) {
          stats.lostAcknowledgements++;
          console.error(
            `Lost acknowledgement: ${p.key} ${JSON.stringify(p.acknowledged)} then ${
              JSON.stringify(final)
            }`,
          );
        }
      }
      stats.rounds++;
      options.onRound?.({ ...stats, failedBy: { ...stats.failedBy } });
    }
  } finally {
    if (service) await service.kill();
    await chain.close();
    await Deno.remove(kvPath).catch(() => {});
  }
  return stats;
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
        createdBy: "Dev1111111111111111111111111111111111111111",
        now: Date.now(),
      });
      keys.push((await createApiKey(kv, project.id, Date.now())).plaintext);
      await savePolicy(kv, project.id, { maxSolPerTransfer: "1" });
      const wallet = await createProjectWallet(ctx, project.id) as Address;
      const share = BigInt(Math.ceil(payouts / projects) + 10);
      await chain.airdrop(wallet, share * (AMOUNT_LAMPORTS + 100_000n) + 1_000_000_000n);
    }
    return keys;
  } finally {
    kv.close();
  }
}

function startChaosService(chain: SandboxChain, kvPath: string): Promise<ServiceProcess> {
  return startServiceProcess({
    KV_PATH: kvPath,
    SECRET,
    RPC_URL_DEVNET: chain.rpcUrl,
    RPC_URL_MAINNET: chain.rpcUrl,
    PUBLISH_URL: "http://127.0.0.1:9",
    IDP_URL: "http://127.0.0.1:9/oauth",
    TX_TIMING: JSON.stringify(TIMING),
  });
}

function post(url: string, apiKey: string, p: Payout): Promise<Response> {
  return fetch(`${url}/v1/tx/transfer-sol`, {
    method: "POST",
    headers: { "x-api-key": apiKey, "content-type": "application/json" },
    body: JSON.stringify({ to: { address: p.to }, amount: AMOUNT, idempotencyKey: p.key }),
  });
}

/** Resends the request with its key until the service answers it (5xx and 429 `rate_limited` retried, as the spec's client guidance says). */
async function resend(
  url: string,
  apiKey: string,
  p: Payout,
): Promise<Record<string, unknown> | null> {
  for (let i = 0; i < 40; i++) {
    try {
      const res = await post(url, apiKey, p);
      const body = await res.json();
      if (res.status === 200) return body;
      const retried = res.status >= 500 || body?.error?.code === "rate_limited";
      if (!retried) throw new Error(`Resend of ${p.key}: ${JSON.stringify(body)}`);
    } catch (error) {
      if (error instanceof Error && error.message.startsWith("Resend")) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return null;
}

async function status(
  url: string,
  apiKey: string,
  key: string,
): Promise<Record<string, unknown> | null> {
  try {
    const res = await fetch(`${url}/v1/tx/${encodeURIComponent(key)}`, {
      headers: { "x-api-key": apiKey },
    });
    return res.status === 200 ? await res.json() : (await res.body?.cancel(), null);
  } catch {
    return null;
  }
}

function isFinal(result: Record<string, unknown> | null): boolean {
  return result?.status === "confirmed" || result?.status === "failed";
}

/**
 * An answer the key's final state contradicts: a `confirmed` answer that became anything else,
 * or a signed answer whose signature the key no longer shows while it did not fail and retry.
 */
function contradicts(
  acknowledged: Record<string, unknown> | null,
  final: Record<string, unknown> | null,
): boolean {
  if (!acknowledged) return false;
  if (!final) return true;
  if (acknowledged.status === "confirmed") {
    return final.status !== "confirmed" || final.signature !== acknowledged.signature;
  }
  if (acknowledged.status === "submitted" && final.status === "confirmed") {
    return final.signature !== acknowledged.signature;
  }
  return false;
}

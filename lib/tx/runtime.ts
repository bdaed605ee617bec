/** Per-process state of the transaction routes, and the context of the transaction domain. */
import type { Address, Blockhash } from "@solana/kit";
import type { EventContext } from "../events/runtime.ts";
import type { Clock } from "../../core/clock.ts";
import type { Cluster } from "../../core/cluster.ts";
import { TxAllowances } from "./allowance/allowance.ts";
import { KeyedLock } from "../../core/keyed_lock.ts";
import { TtlCache } from "../../core/ttl_cache.ts";
import type { MintInfo } from "../chain/mints.ts";
import { defaultTxTiming, rpcSignal, type TxTiming } from "./rpc/timing.ts";
import { RecentLinks } from "./recent_links.ts";
import { StatusPoller } from "./rpc/status_poller.ts";
import type { RpcClients } from "../chain/rpc_clients.ts";

// A mint's program and decimals never change, so a found mint can be remembered for a while;
// a missing one is not remembered, so a mint created a moment ago is seen at once.
const MINT_TTL_MS = 10 * 60_000;
const MISSING = Symbol("missing mint");

/** Remembers mints found on each cluster; concurrent lookups of one mint share one fetch. */
class MintCache {
  #cache: TtlCache<MintInfo>;

  constructor(clock: Clock) {
    this.#cache = new TtlCache(clock, { ttlMs: MINT_TTL_MS });
  }

  /** The mint, remembered or from `fetch`; null (and not remembered) when it does not exist. */
  async get(
    cluster: Cluster,
    mint: Address,
    fetch: () => Promise<MintInfo | null>,
  ): Promise<MintInfo | null> {
    try {
      return await this.#cache.get(`${cluster}:${mint}`, async () => {
        const info = await fetch();
        // TtlCache keeps no failure, so a missing mint leaves as one.
        if (!info) throw MISSING;
        return info;
      });
    } catch (error) {
      if (error === MISSING) return null;
      throw error;
    }
  }
}

/** A recent blockhash, the last block height it can land at, and the slot of its block. */
interface LatestBlockhash {
  blockhash: Blockhash;
  lastValidBlockHeight: bigint;
  slot: bigint;
}

// A blockhash stays usable for 150 blocks (about a minute); reusing one for a second costs the
// transaction under 3 of them and saves an RPC round trip per request under load. Its age is
// real time, whatever clock the service runs on: the chain does not follow a test's clock.
const BLOCKHASH_TTL_MS = 1_000;
const realTime: Clock = { now: () => performance.now() };

/** The transaction routes' per-process state. */
export interface TxRuntime {
  timing: TxTiming;
  mints: MintCache;
  /** This instance's leased blocks of the project-wide transaction limits. */
  allowances: TxAllowances;
  /**
   * Serialises a project's failed settlements in this process: each gives its places back in its
   * recipient's and player's windows, and a burst of them (a drained wallet refusing a round's
   * payouts, often to few players) would otherwise retry against each other until they give up.
   * Confirmed settlements write no shared record but the event feed, and do not wait here.
   */
  failedSettlements: KeyedLock;
  /**
   * Reservations writing one recipient's or player's window take turns in this process
   * (`window_turns.ts`) instead of committing against each other.
   */
  windowTurns: KeyedLock;
  /** One `getLatestBlockhash` per cluster per second, shared by concurrent requests. */
  blockhashes: TtlCache<LatestBlockhash>;
  /** The routes' confirmation waits, one status lookup per cluster and poll interval. */
  statuses: StatusPoller;
  /** The recipients payouts and wallet reads found lately: what reservations read ahead for. */
  links: RecentLinks;
}

/** What the transaction domain takes: the services, the event pipeline (a settled attempt records its event) and its own state. */
export interface TxContext extends EventContext {
  tx: TxRuntime;
}

/** Builds the runtime with the spec's timing. */
export function createTxRuntime(
  input: {
    kv: Deno.Kv;
    clock: Clock;
    rpc: RpcClients;
  },
): TxRuntime {
  const { kv, clock, rpc } = input;
  const runtime: TxRuntime = {
    timing: defaultTxTiming(),
    mints: new MintCache(clock),
    allowances: new TxAllowances({ kv, clock }),
    failedSettlements: new KeyedLock(),
    windowTurns: new KeyedLock(),
    blockhashes: new TtlCache(realTime, { ttlMs: BLOCKHASH_TTL_MS }),
    statuses: new StatusPoller({
      rpc: (cluster) => rpc[cluster],
      // Read at each poll: tests shorten the timing after the runtime is built.
      intervalMs: () => runtime.timing.routePollMs,
      callSignal: () => rpcSignal(runtime.timing),
    }),
    links: new RecentLinks(),
  };
  return runtime;
}

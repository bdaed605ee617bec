// The sandbox Solana cluster: a JSON-RPC node on LiteSVM with real-cluster timing and faults.
import { type Address, address, type Signature } from "@solana/kit";
import { writeAccount } from "./accounts.ts";
import { clusterState } from "./control.ts";
import { dasMethods } from "./das.ts";
import { type ChainFaults, createFaults } from "./faults.ts";
import { stringifyJson } from "./json.ts";
import { advanceSlots, airdrop, createLedger } from "./ledger.ts";
import { rpcMethods } from "./rpc_methods.ts";
import { createChainApp } from "./server.ts";

export type { ChainFaults, FaultScope, FaultSnapshot } from "./faults.ts";
export { connectChain, type RemoteChain } from "./remote.ts";
export * from "./fixtures.ts";
export * from "./fixtures_nft.ts";
export {
  decodeEdition,
  decodeMetadata,
  encodeEdition,
  encodeMetadata,
  findEditionPda,
  findMetadataPda,
  TOKEN_METADATA_PROGRAM,
} from "./metaplex.ts";

export type StartChainOptions = {
  /** TCP port; 0 (the default) picks a free one. `deno task chain` uses CHAIN_PORT or 8899. */
  port?: number;
  hostname?: string;
  /** Slot length in milliseconds when time runs on its own (default 400). */
  slotMs?: number;
  /** Advance slots on a timer (default true); tests pass false and call advanceSlots(). */
  autoAdvance?: boolean;
  /** Slots confirmed lags processed by (default 1). */
  confirmedLag?: number;
  /** Slots finalized lags processed by (default 32). */
  finalizedLag?: number;
  /** Receives one JSON line per notable event; silent when absent. */
  log?: (line: string) => void;
};

export type ChainAccount = {
  lamports: bigint;
  owner: Address;
  data: Uint8Array;
  executable?: boolean;
};

export type SandboxChain = AsyncDisposable & {
  /** JSON-RPC endpoint, e.g. http://127.0.0.1:8899 */
  rpcUrl: string;
  /** DAS (digital asset) JSON-RPC endpoint: `${rpcUrl}/das` */
  dasUrl: string;
  /** Control API base: `${rpcUrl}/control` */
  controlUrl: string;
  port: number;
  slotMs: number;
  autoAdvance: boolean;
  /** Steps time by `n` slots at once (deterministic; works with autoAdvance too). */
  advanceSlots(n: number): void;
  /** Current processed slot, block height and commitment slots. */
  clock(): { slot: number; blockHeight: number; confirmedSlot: number; finalizedSlot: number };
  faults: ChainFaults;
  /** Faucet transfer in a real transaction landing in the current slot. */
  airdrop(to: Address, lamports: bigint): Promise<Signature>;
  /** Writes an account directly, visible at every commitment at once (as if in genesis). */
  setAccount(address: Address, account: ChainAccount): void;
  /** Sandbox-only: image URL the DAS endpoint reports for an asset (real DAS reads json_uri). */
  setAssetImage(mint: Address, imageUrl: string): void;
  /** Stops the server and the slot timer; `await using` calls it too. */
  close(): Promise<void>;
};

/** Starts a sandbox cluster with its HTTP server; close() stops both. */
export async function startChain(options: StartChainOptions = {}): Promise<SandboxChain> {
  const slotMs = options.slotMs ?? 400;
  const autoAdvance = options.autoAdvance ?? true;
  const sink = options.log;
  const state = await createLedger({
    slotMs,
    confirmedLag: options.confirmedLag ?? 1,
    finalizedLag: options.finalizedLag ?? 32,
    log: sink
      ? (event) =>
        sink(stringifyJson({
          time: new Date().toISOString(),
          level: "info",
          msg: event.event,
          service: "chain",
          ...event,
        }))
      : () => {},
  });
  const faults = createFaults(state);
  const app = createChainApp(state, faults, { rpc: rpcMethods, das: dasMethods });
  const hostname = options.hostname ?? "127.0.0.1";
  const server = Deno.serve(
    { port: options.port ?? 0, hostname, onListen: () => {} },
    app.fetch,
  );
  const port = server.addr.port;
  const timer = autoAdvance ? setInterval(() => advanceSlots(state, 1), slotMs) : undefined;
  const host = hostname.includes(":") ? `[${hostname}]` : hostname;
  const rpcUrl = `http://${host === "0.0.0.0" ? "127.0.0.1" : host}:${port}`;
  state.options.log({ event: "chain_started", rpcUrl, slotMs, autoAdvance });
  const close = async () => {
    clearInterval(timer);
    await server.shutdown();
    state.options.log({ event: "chain_stopped" });
  };
  return {
    rpcUrl,
    dasUrl: `${rpcUrl}/das`,
    controlUrl: `${rpcUrl}/control`,
    port,
    slotMs,
    autoAdvance,
    advanceSlots: (n) => advanceSlots(state, n),
    clock: () => clusterState(state),
    faults,
    airdrop: async (to, amount) => (await airdrop(state, to, amount)) as Signature,
    setAccount(key, account) {
      writeAccount(state, key, { executable: false, ...account });
      state.options.log({ event: "account_written", address: key, owner: account.owner });
    },
    setAssetImage(mint, imageUrl) {
      state.assetImages.set(address(mint), imageUrl);
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

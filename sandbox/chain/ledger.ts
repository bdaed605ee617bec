// The cluster as one object: creation, time, and the faucet.
import {
  address,
  appendTransactionMessageInstruction,
  blockhash,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionEncoder,
  lamports,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
} from "@solana/kit";
import { getTransferSolInstruction } from "@solana-program/system";
import { writeAccount } from "./accounts.ts";
import { openBlock, stepSlot } from "./clock.ts";
import { landTransaction } from "./land.ts";
import {
  createSvm,
  FAUCET_LAMPORTS,
  type LedgerOptions,
  type LedgerState,
  MAX_PROCESSING_AGE,
} from "./state.ts";
import { processPending } from "./submit.ts";
import { decodeTransaction } from "./wire.ts";

/** Creates a cluster with a funded faucet, already running long enough to have a finalized slot. */
export async function createLedger(options: LedgerOptions): Promise<LedgerState> {
  const faucet = await generateKeyPairSigner();
  const state: LedgerState = {
    svm: createSvm(),
    options,
    slot: 0,
    blockHeight: 0,
    finalizedSlot: 0,
    startUnix: Math.floor(Date.now() / 1000),
    genesisHash: "",
    blocksBySlot: new Map(),
    blocksByHash: new Map(),
    accountVersions: new Map(),
    transactions: new Map(),
    transactionsByAddress: new Map(),
    nextSeq: 0,
    pending: new Map(),
    slotFees: new Map(),
    faults: {
      dropNext: 0,
      delayNext: 0,
      delaySlots: 0,
      httpNext: 0,
      httpFault: { mode: "status", status: 503 },
      httpScope: "rpc",
      finalizationPaused: false,
      firstAvailableSlot: 0,
      hideStatuses: false,
      historyLagSlots: 0,
    },
    assetImages: new Map(),
    faucet,
  };
  state.genesisHash = openBlock(state).blockhash;
  writeAccount(state, faucet.address, {
    lamports: FAUCET_LAMPORTS,
    data: new Uint8Array(),
    owner: address("11111111111111111111111111111111"),
    executable: false,
  });
  // Genesis is finalized; without this lead-in, slot 0 would be processed and finalized at once.
  advanceSlots(state, options.finalizedLag);
  return state;
}

/** Advances the cluster by `n` slots, landing or expiring held transactions on the way. */
export function advanceSlots(state: LedgerState, n: number): void {
  for (let i = 0; i < n; i++) {
    stepSlot(state);
    processPending(state);
  }
}

/** Sends lamports from the faucet in a real transaction landing in the current slot. */
export async function airdrop(
  state: LedgerState,
  to: string,
  amount: bigint,
): Promise<string> {
  // Identical requests in one slot would sign to one signature, which a leader drops as a
  // duplicate; an older (still valid) blockhash keeps each airdrop distinct.
  for (let back = 0; back < MAX_PROCESSING_AGE; back++) {
    const block = state.blocksBySlot.get(state.slot - back);
    if (!block) break;
    const signed = await signTransactionMessageWithSigners(pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayerSigner(state.faucet, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash({
          blockhash: blockhash(block.blockhash),
          lastValidBlockHeight: BigInt(block.blockHeight + MAX_PROCESSING_AGE),
        }, m),
      (m) =>
        appendTransactionMessageInstruction(
          getTransferSolInstruction({
            source: state.faucet,
            destination: address(to),
            amount: lamports(amount),
          }),
          m,
        ),
    ));
    const wire = new Uint8Array(getTransactionEncoder().encode(signed));
    const tx = decodeTransaction(wire);
    if (state.transactions.has(tx.signature)) continue;
    if (!landTransaction(state, tx, wire)) {
      throw new Error("Cannot airdrop: faucet transfer failed");
    }
    state.options.log({ event: "airdrop", to, lamports: amount, signature: tx.signature });
    return tx.signature;
  }
  throw new Error("Cannot airdrop: too many identical requests in this block range");
}

// The cluster's whole state: one LiteSVM bank plus what a real node keeps around it (slots,
// blockhash queue, commitment levels, account history per commitment, transaction index).
import { LiteSVM } from "litesvm";
import type { Address, KeyPairSigner } from "@solana/kit";
import type { DecodedTransaction } from "./wire.ts";
import type { TransactionErrorJson } from "./tx_errors.ts";

export type Commitment = "processed" | "confirmed" | "finalized";

export type BlockRecord = {
  slot: number;
  blockHeight: number;
  blockhash: string;
  blockTime: number;
};

export type AccountSnapshot = {
  lamports: bigint;
  data: Uint8Array;
  owner: Address;
  executable: boolean;
};

export type AccountVersion = { slot: number; account: AccountSnapshot | null };

export type TokenBalanceJson = {
  accountIndex: number;
  mint: string;
  owner: string;
  programId: string;
  uiTokenAmount: {
    amount: string;
    decimals: number;
    uiAmount: number | null;
    uiAmountString: string;
  };
};

export type TransactionRecord = {
  signature: string;
  seq: number;
  slot: number;
  blockTime: number;
  wire: Uint8Array;
  decoded: DecodedTransaction;
  err: TransactionErrorJson | null;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalanceJson[];
  postTokenBalances: TokenBalanceJson[];
  logs: string[];
  computeUnitsConsumed: bigint;
  innerInstructions: InnerInstructionsJson[];
  returnData: { programId: string; data: [string, "base64"] } | null;
};

export type InnerInstructionsJson = {
  index: number;
  instructions: {
    programIdIndex: number;
    accounts: number[];
    data: string;
    stackHeight: number | null;
  }[];
};

export type PendingTransaction = {
  signature: string;
  wire: Uint8Array;
  decoded: DecodedTransaction;
  /** Slot at which the transaction lands, or null when it must never land. */
  landAtSlot: number | null;
};

export type HttpFault = { mode: "status"; status: number } | { mode: "close" };

export type FaultState = {
  dropNext: number;
  delayNext: number;
  delaySlots: number;
  httpNext: number;
  httpFault: HttpFault;
  httpScope: "rpc" | "das" | "all";
  finalizationPaused: boolean;
  /** Oldest slot the node still has history for (a node started from a snapshot, or pruned). */
  firstAvailableSlot: number;
  /** Landed signatures' statuses and transactions answer null, while full history is claimed. */
  hideStatuses: boolean;
  /** History reads (statuses, transactions, address history) see the ledger this many slots ago. */
  historyLagSlots: number;
};

export type SlotFees = { min: bigint | null; byAccount: Map<string, bigint> };

export type LedgerOptions = {
  slotMs: number;
  confirmedLag: number;
  finalizedLag: number;
  log: (event: Record<string, unknown>) => void;
};

export type LedgerState = {
  svm: LiteSVM;
  options: LedgerOptions;
  slot: number;
  blockHeight: number;
  finalizedSlot: number;
  startUnix: number;
  genesisHash: string;
  blocksBySlot: Map<number, BlockRecord>;
  blocksByHash: Map<string, BlockRecord>;
  accountVersions: Map<string, AccountVersion[]>;
  transactions: Map<string, TransactionRecord>;
  transactionsByAddress: Map<string, TransactionRecord[]>;
  nextSeq: number;
  pending: Map<string, PendingTransaction>;
  slotFees: Map<number, SlotFees>;
  faults: FaultState;
  assetImages: Map<string, string>;
  faucet: KeyPairSigner;
};

/** Lamports the faucet starts with (the genesis faucet of solana-test-validator holds 500M SOL). */
export const FAUCET_LAMPORTS = 500_000_000n * 1_000_000_000n;

/** Blocks a blockhash stays usable for landing (MAX_PROCESSING_AGE). */
export const MAX_PROCESSING_AGE = 150;

/** Preflight allows for forwarding delay (MAX_PROCESSING_AGE - MAX_TRANSACTION_FORWARDING_DELAY). */
export const MAX_SIMULATION_AGE = 144;

/** Slots a signature stays in the status cache that answers without searchTransactionHistory. */
export const STATUS_CACHE_SLOTS = 300;

/** Slots of history getRecentPrioritizationFees covers. */
export const PRIORITIZATION_FEE_SLOTS = 150;

/** True when the node no longer has the record's slot in its ledger (pruned history). */
export function isPruned(state: LedgerState, record: TransactionRecord): boolean {
  return record.slot < state.faults.firstAvailableSlot;
}

/** The slot history reads see: `slot`, moved back by the history-lag fault. */
export function historySlot(state: LedgerState, slot: number): number {
  return Math.max(0, slot - state.faults.historyLagSlots);
}

export function createSvm(): LiteSVM {
  // Blockhash, signature and duplicate checks are done here, as a real node does them against
  // its own blockhash queue and status cache; LiteSVM only knows one blockhash.
  return new LiteSVM()
    .withBlockhashCheck(false)
    .withSigverify(false)
    .withTransactionHistory(0n);
}

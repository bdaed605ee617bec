// sendTransaction and simulateTransaction as the node runs them: sigverify, preflight against
// the preflight bank, then hand-over to the leader (here: landing now, later, or never).
import { FailedTransactionMetadata } from "litesvm";
import { currentAccount } from "./accounts.ts";
import { blockAt, commitmentSlot, isBlockhashUsable } from "./clock.ts";
import { encodeAccount } from "./encoding.ts";
import { feeOf, innerInstructionsJson, landTransaction, returnDataJson } from "./land.ts";
import { RpcError } from "./rpc_errors.ts";
import {
  type Commitment,
  type LedgerState,
  MAX_PROCESSING_AGE,
  MAX_SIMULATION_AGE,
} from "./state.ts";
import {
  type TransactionErrorJson,
  transactionErrorJson,
  transactionErrorText,
} from "./tx_errors.ts";
import { type DecodedTransaction, verifySignatures } from "./wire.ts";

export type SimulationOptions = {
  bankSlot: number;
  replaceRecentBlockhash?: boolean;
  innerInstructions?: boolean;
  accounts?: { addresses: string[]; encoding?: string } | undefined;
};

export type SimulationResult = {
  err: TransactionErrorJson | null;
  logs: string[];
  accounts: unknown[] | null;
  unitsConsumed: bigint;
  returnData: unknown;
  innerInstructions: unknown[] | null;
  replacementBlockhash: { blockhash: string; lastValidBlockHeight: number } | null;
  loadedAccountsDataSize: number;
  fee: bigint | null;
  preBalances: null;
  postBalances: null;
  preTokenBalances: null;
  postTokenBalances: null;
  loadedAddresses: null;
};

export function signatureVerificationFailure(): RpcError {
  return new RpcError(-32003, "Transaction signature verification failure");
}

/**
 * Simulates against the newest state. A real node simulates against the bank of the requested
 * commitment; the sandbox applies that bank's blockhash queue and status cache but runs the
 * programs on the processed state.
 */
export function simulate(
  state: LedgerState,
  tx: DecodedTransaction,
  options: SimulationOptions,
): SimulationResult {
  const result: SimulationResult = {
    err: null,
    logs: [],
    accounts: null,
    unitsConsumed: 0n,
    returnData: null,
    innerInstructions: options.innerInstructions ? [] : null,
    replacementBlockhash: null,
    loadedAccountsDataSize: 0,
    fee: null,
    preBalances: null,
    postBalances: null,
    preTokenBalances: null,
    postTokenBalances: null,
    loadedAddresses: null,
  };
  if (options.replaceRecentBlockhash) {
    const block = blockAt(state, options.bankSlot);
    result.replacementBlockhash = {
      blockhash: block.blockhash,
      lastValidBlockHeight: block.blockHeight + MAX_PROCESSING_AGE,
    };
  } else if (!isBlockhashUsable(state, tx.blockhash, options.bankSlot, MAX_SIMULATION_AGE)) {
    result.err = "BlockhashNotFound";
    return result;
  }
  const landed = state.transactions.get(tx.signature);
  if (landed && landed.slot <= options.bankSlot) {
    result.err = "AlreadyProcessed";
    return result;
  }
  const sim = state.svm.simulateTransaction(tx.transaction);
  const meta = sim instanceof FailedTransactionMetadata ? sim.meta() : sim.meta();
  result.logs = meta.logs();
  result.unitsConsumed = meta.computeUnitsConsumed();
  result.returnData = returnDataJson(meta);
  if (options.innerInstructions) result.innerInstructions = innerInstructionsJson(meta);
  result.fee = feeOf(tx);
  result.loadedAccountsDataSize = tx.accountKeys.reduce(
    (sum, key) => sum + (currentAccount(state, key)?.data.length ?? 0),
    0,
  );
  if (sim instanceof FailedTransactionMetadata) {
    result.err = transactionErrorJson(sim);
  } else if (options.accounts) {
    const post = new Map(sim.postAccounts().map((a) => [a.address as string, a]));
    result.accounts = options.accounts.addresses.map((key) => {
      const a = post.get(key) ?? state.svm.getAccount(key as never);
      if (!("data" in a) || a.lamports === 0n) return null;
      const snapshot = {
        lamports: a.lamports,
        data: new Uint8Array(a.data),
        owner: a.programAddress,
        executable: a.executable,
      };
      return encodeAccount(
        state,
        snapshot,
        { encoding: options.accounts!.encoding ?? "base64" },
        state.slot,
      );
    });
  }
  if (result.err && options.accounts) result.accounts = null;
  return result;
}

export type SendOptions = {
  skipPreflight?: boolean;
  preflightCommitment?: Commitment | undefined;
};

/** Runs sendTransaction; returns the signature or throws the node's RpcError. */
export async function sendTransaction(
  state: LedgerState,
  tx: DecodedTransaction,
  wire: Uint8Array,
  options: SendOptions,
): Promise<string> {
  const log = state.options.log;
  const signatureValid = await verifySignatures(tx);
  if (!options.skipPreflight) {
    if (!signatureValid) throw signatureVerificationFailure();
    const bankSlot = commitmentSlot(state, options.preflightCommitment);
    // Landed after the preflight bank: that bank would simulate it without the transaction's own
    // effects (and pass), so answer the signature rather than simulate on the newer state.
    const landed = state.transactions.get(tx.signature);
    if (landed && landed.slot > bankSlot) return tx.signature;
    const sim = simulate(state, tx, { bankSlot });
    if (sim.err) {
      log({ event: "tx_preflight_failed", signature: tx.signature, err: sim.err });
      throw new RpcError(
        -32002,
        `Transaction simulation failed: ${transactionErrorText(sim.err)}`,
        {
          accounts: null,
          err: sim.err,
          fee: sim.fee,
          innerInstructions: null,
          loadedAccountsDataSize: sim.loadedAccountsDataSize,
          logs: sim.logs,
          postBalances: null,
          postTokenBalances: null,
          preBalances: null,
          preTokenBalances: null,
          replacementBlockhash: null,
          returnData: sim.returnData,
          unitsConsumed: sim.unitsConsumed,
        },
      );
    }
  }
  // A duplicate is dropped by the leader; the node still answers with the signature.
  if (state.transactions.has(tx.signature) || state.pending.has(tx.signature)) {
    return tx.signature;
  }
  if (!signatureValid) {
    log({
      event: "tx_dropped",
      signature: tx.signature,
      slot: state.slot,
      reason: "SignatureFailure",
    });
    return tx.signature;
  }
  const faults = state.faults;
  if (faults.dropNext > 0) {
    faults.dropNext -= 1;
    state.pending.set(tx.signature, {
      signature: tx.signature,
      wire,
      decoded: tx,
      landAtSlot: null,
    });
    log({
      event: "fault_applied",
      fault: "never_land",
      signature: tx.signature,
      remaining: faults.dropNext,
    });
    return tx.signature;
  }
  if (faults.delayNext > 0) {
    faults.delayNext -= 1;
    const landAtSlot = state.slot + faults.delaySlots;
    state.pending.set(tx.signature, { signature: tx.signature, wire, decoded: tx, landAtSlot });
    log({
      event: "fault_applied",
      fault: "delay_landing",
      signature: tx.signature,
      landAtSlot,
      remaining: faults.delayNext,
    });
    return tx.signature;
  }
  landTransaction(state, tx, wire);
  return tx.signature;
}

/** Lands delayed transactions that are due and forgets held ones whose blockhash expired. */
export function processPending(state: LedgerState): void {
  for (const pending of [...state.pending.values()]) {
    if (pending.landAtSlot !== null && pending.landAtSlot <= state.slot) {
      state.pending.delete(pending.signature);
      landTransaction(state, pending.decoded, pending.wire);
    } else if (
      !isBlockhashUsable(state, pending.decoded.blockhash, state.slot, MAX_PROCESSING_AGE)
    ) {
      state.pending.delete(pending.signature);
      state.options.log({
        event: "tx_expired",
        signature: pending.signature,
        slot: state.slot,
        blockHeight: state.blockHeight,
      });
    }
  }
}

// Transaction methods: simulate, send, airdrop, statuses.
import { checkAccountEncoding } from "./encoding.ts";
import { airdrop } from "./ledger.ts";
import { invalidParam, invalidParams } from "./rpc_errors.ts";
import {
  bankSlot,
  commitmentOf,
  configParam,
  context,
  integerParam,
  param,
  pubkeyParam,
  signatureParam,
} from "./rpc_params.ts";
import type { RpcHandler } from "./rpc_dispatch.ts";
import {
  historySlot,
  isPruned,
  type LedgerState,
  STATUS_CACHE_SLOTS,
  type TransactionRecord,
} from "./state.ts";
import { sendTransaction, signatureVerificationFailure, simulate } from "./submit.ts";
import { decodeTransaction, decodeWireString, verifySignatures } from "./wire.ts";

/** The commitment a landed transaction has reached, as history reads see it (history lag). */
export function confirmationStatus(
  state: LedgerState,
  record: TransactionRecord,
): "processed" | "confirmed" | "finalized" {
  const finalized = historySlot(state, state.finalizedSlot);
  if (record.slot <= finalized) return "finalized";
  if (
    record.slot <= Math.max(finalized, historySlot(state, state.slot) - state.options.confirmedLag)
  ) {
    return "confirmed";
  }
  return "processed";
}

export const transactionMethods: Record<string, RpcHandler> = {
  simulateTransaction: async (state, params) => {
    const text = param<string>(params, 0, "1 or 2 elements");
    const config = configParam(params, 1);
    if (config.sigVerify && config.replaceRecentBlockhash) {
      throw invalidParams("sigVerify may not be used with replaceRecentBlockhash");
    }
    const tx = decodeTransaction(decodeWireString(text, config.encoding as string | undefined));
    if (config.sigVerify && !(await verifySignatures(tx))) throw signatureVerificationFailure();
    const accounts = config.accounts as { addresses: string[]; encoding?: string } | undefined;
    if (accounts) {
      if (!Array.isArray(accounts.addresses)) {
        throw invalidParams("Invalid params: missing field `addresses`.");
      }
      accounts.addresses.forEach(pubkeyParam);
      checkAccountEncoding(accounts.encoding);
      if (accounts.encoding === "binary" || accounts.encoding === "base58") {
        throw invalidParams("Invalid params: base58 encoding not supported");
      }
    }
    const slot = bankSlot(state, config);
    const value = simulate(state, tx, {
      bankSlot: slot,
      replaceRecentBlockhash: config.replaceRecentBlockhash === true,
      innerInstructions: config.innerInstructions === true,
      accounts,
    });
    return { context: context(slot), value };
  },
  sendTransaction: (state, params) => {
    const text = param<string>(params, 0, "1 or 2 elements");
    const config = configParam(params, 1);
    const wire = decodeWireString(text, config.encoding as string | undefined);
    const tx = decodeTransaction(wire);
    const preflightCommitment = commitmentOf(config, "preflightCommitment");
    if (config.minContextSlot !== undefined) {
      bankSlot(state, { commitment: preflightCommitment, minContextSlot: config.minContextSlot });
    }
    return sendTransaction(state, tx, wire, {
      skipPreflight: config.skipPreflight === true,
      preflightCommitment,
    });
  },
  requestAirdrop: (state, params) => {
    const key = pubkeyParam(param(params, 0, "2 or 3 elements"));
    const amount = param<number | bigint>(params, 1, "2 or 3 elements");
    integerParam(amount, "u64");
    return airdrop(state, key, BigInt(amount));
  },
  getSignatureStatuses: (state, params) => {
    const signatures = param<unknown[]>(params, 0, "1 or 2 elements");
    if (!Array.isArray(signatures)) {
      throw invalidParams("Invalid params: invalid type, expected a sequence.");
    }
    if (signatures.length > 256) throw invalidParam("Too many inputs provided; max 256");
    const config = configParam(params, 1);
    const slot = historySlot(state, state.slot);
    const value = signatures.map(signatureParam).map((signature) => {
      const record = state.transactions.get(signature);
      if (!record || record.slot > slot || isPruned(state, record)) return null;
      if (state.faults.hideStatuses) return null;
      // Without searchTransactionHistory only the status cache of recent slots answers.
      if (!config.searchTransactionHistory && record.slot < slot - STATUS_CACHE_SLOTS) {
        return null;
      }
      const status = confirmationStatus(state, record);
      return {
        confirmationStatus: status,
        confirmations: status === "finalized" ? null : slot - record.slot,
        err: record.err,
        slot: record.slot,
        status: record.err ? { Err: record.err } : { Ok: null },
      };
    });
    return { context: context(slot), value };
  },
};

// Landing a transaction in the current slot, and the record the node keeps of it.
import { base58, base64 } from "@scure/base";
import { FailedTransactionMetadata, type TransactionMetadata } from "litesvm";
import { accountAt, recordAccountChanges, snapshotAccounts } from "./accounts.ts";
import { isBlockhashUsable } from "./clock.ts";
import {
  type AccountSnapshot,
  type InnerInstructionsJson,
  type LedgerState,
  MAX_PROCESSING_AGE,
  type TokenBalanceJson,
  type TransactionRecord,
} from "./state.ts";
import { decodeMint, decodeTokenAccount, tokenAmountJson } from "./token_layout.ts";
import { landsWithError, type TransactionErrorJson, transactionErrorJson } from "./tx_errors.ts";
import { type DecodedTransaction, isWritable } from "./wire.ts";

const COMPUTE_BUDGET_PROGRAM = "ComputeBudget111111111111111111111111111111";
const LAMPORTS_PER_SIGNATURE = 5000n;

/** Compute-unit price and limit a transaction asks for (defaults as the runtime applies them). */
export function computeBudgetOf(tx: DecodedTransaction): { price: bigint; limit: bigint } {
  let price = 0n;
  let limit: bigint | null = null;
  let others = 0;
  for (const ix of tx.instructions) {
    if (tx.accountKeys[ix.programIdIndex] !== COMPUTE_BUDGET_PROGRAM) {
      others += 1;
      continue;
    }
    const v = new DataView(ix.data.buffer, ix.data.byteOffset, ix.data.byteLength);
    if (ix.data[0] === 2 && ix.data.length >= 5) limit = BigInt(v.getUint32(1, true));
    if (ix.data[0] === 3 && ix.data.length >= 9) price = v.getBigUint64(1, true);
  }
  const max = 1_400_000n;
  limit ??= BigInt(others) * 200_000n;
  return { price, limit: limit > max ? max : limit };
}

/** The fee the runtime charges: 5,000 lamports a signature plus the priority fee. */
export function feeOf(tx: DecodedTransaction): bigint {
  const { price, limit } = computeBudgetOf(tx);
  const priority = (price * limit + 999_999n) / 1_000_000n;
  return LAMPORTS_PER_SIGNATURE * BigInt(tx.signatures.length) + priority;
}

export function tokenBalances(
  state: LedgerState,
  accounts: (AccountSnapshot | null)[],
): TokenBalanceJson[] {
  const out: TokenBalanceJson[] = [];
  accounts.forEach((account, accountIndex) => {
    const token = account ? decodeTokenAccount(account) : null;
    if (!account || !token) return;
    const mint = accountAt(state, token.mint, state.slot);
    const decimals = mint ? decodeMint(mint)?.decimals : undefined;
    if (decimals === undefined) return;
    out.push({
      accountIndex,
      mint: token.mint,
      owner: token.owner,
      programId: account.owner,
      uiTokenAmount: tokenAmountJson(token.amount, decimals),
    });
  });
  return out;
}

export function innerInstructionsJson(meta: TransactionMetadata): InnerInstructionsJson[] {
  const out: InnerInstructionsJson[] = [];
  meta.innerInstructions().forEach((list, index) => {
    if (list.length === 0) return;
    out.push({
      index,
      instructions: list.map((inner) => {
        const ix = inner.instruction();
        return {
          programIdIndex: ix.programIdIndex(),
          accounts: [...ix.accounts()],
          data: base58.encode(ix.data()),
          stackHeight: inner.stackHeight(),
        };
      }),
    });
  });
  return out;
}

export function returnDataJson(
  meta: TransactionMetadata,
): { programId: string; data: [string, "base64"] } | null {
  const ret = meta.returnData();
  const data = ret.data();
  if (data.length === 0) return null;
  return { programId: base58.encode(ret.programId()), data: [base64.encode(data), "base64"] };
}

/**
 * Executes a transaction in the current slot as a leader would. Returns the record, or null
 * when the leader drops it (expired blockhash, duplicate, fee payer cannot pay).
 */
export function landTransaction(
  state: LedgerState,
  tx: DecodedTransaction,
  wire: Uint8Array,
): TransactionRecord | null {
  const log = state.options.log;
  if (state.transactions.has(tx.signature)) return null;
  if (!isBlockhashUsable(state, tx.blockhash, state.slot, MAX_PROCESSING_AGE)) {
    log({
      event: "tx_dropped",
      signature: tx.signature,
      slot: state.slot,
      reason: "BlockhashNotFound",
    });
    return null;
  }
  const keys = tx.accountKeys as string[];
  const before = snapshotAccounts(state, keys);
  const result = state.svm.sendTransaction(tx.transaction);
  let err: TransactionErrorJson | null = null;
  let meta: TransactionMetadata;
  if (result instanceof FailedTransactionMetadata) {
    err = transactionErrorJson(result);
    if (!landsWithError(err)) {
      log({ event: "tx_dropped", signature: tx.signature, slot: state.slot, reason: err });
      return null;
    }
    meta = result.meta();
  } else {
    meta = result;
  }
  const writable = keys.filter((_, i) => isWritable(tx, i));
  recordAccountChanges(state, writable, before.filter((_, i) => isWritable(tx, i)));
  const after = snapshotAccounts(state, keys);
  const block = state.blocksBySlot.get(state.slot)!;
  const record: TransactionRecord = {
    signature: tx.signature,
    seq: state.nextSeq++,
    slot: state.slot,
    blockTime: block.blockTime,
    wire,
    decoded: tx,
    err,
    fee: feeOf(tx),
    preBalances: before.map((a) => a?.lamports ?? 0n),
    postBalances: after.map((a) => a?.lamports ?? 0n),
    preTokenBalances: tokenBalances(state, before),
    postTokenBalances: tokenBalances(state, after),
    logs: meta.logs(),
    computeUnitsConsumed: meta.computeUnitsConsumed(),
    innerInstructions: innerInstructionsJson(meta),
    returnData: returnDataJson(meta),
  };
  state.transactions.set(record.signature, record);
  for (const key of new Set(keys)) {
    let list = state.transactionsByAddress.get(key);
    if (!list) state.transactionsByAddress.set(key, list = []);
    list.push(record);
  }
  recordFees(state, tx, writable);
  log({ event: err ? "tx_failed" : "tx_landed", signature: tx.signature, slot: state.slot, err });
  return record;
}

function recordFees(state: LedgerState, tx: DecodedTransaction, writable: string[]): void {
  const { price } = computeBudgetOf(tx);
  let fees = state.slotFees.get(state.slot);
  if (!fees) state.slotFees.set(state.slot, fees = { min: null, byAccount: new Map() });
  fees.min = fees.min === null || price < fees.min ? price : fees.min;
  for (const key of writable) {
    const current = fees.byAccount.get(key);
    if (current === undefined || price < current) fees.byAccount.set(key, price);
  }
}

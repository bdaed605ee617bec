// Ledger history: getTransaction and getSignaturesForAddress.
import { base58, base64 } from "@scure/base";
import { commitmentSlot } from "./clock.ts";
import { invalidParams, RpcError } from "./rpc_errors.ts";
import {
  atLeastConfirmed,
  configParam,
  param,
  pubkeyParam,
  reachedMinContextSlot,
  signatureParam,
} from "./rpc_params.ts";
import type { RpcHandler } from "./rpc_dispatch.ts";
import { confirmationStatus } from "./rpc_methods_transactions.ts";
import { historySlot, isPruned, type TransactionRecord } from "./state.ts";
import { type DecodedTransaction, isSigner, isWritable } from "./wire.ts";

const MEMO_PROGRAMS = [
  "MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr",
  "Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo",
];

/** The memo column of getSignaturesForAddress: "[len] text" per memo, joined by "; ". */
export function memoOf(tx: DecodedTransaction): string | null {
  const memos = tx.instructions
    .filter((ix) => {
      const program = tx.accountKeys[ix.programIdIndex];
      return program !== undefined && MEMO_PROGRAMS.includes(program);
    })
    .map((ix) => `[${ix.data.length}] ${new TextDecoder().decode(ix.data)}`);
  return memos.length ? memos.join("; ") : null;
}

function messageJson(tx: DecodedTransaction, parsed: boolean) {
  const instructions = tx.instructions.map((ix) =>
    parsed
      ? {
        accounts: ix.accounts.map((i) => tx.accountKeys[i]),
        data: base58.encode(ix.data),
        programId: tx.accountKeys[ix.programIdIndex],
        stackHeight: null,
      }
      : {
        accounts: ix.accounts,
        data: base58.encode(ix.data),
        programIdIndex: ix.programIdIndex,
        stackHeight: null,
      }
  );
  const message: Record<string, unknown> = {
    accountKeys: parsed
      ? tx.accountKeys.map((pubkey, i) => ({
        pubkey,
        signer: isSigner(tx, i),
        source: "transaction",
        writable: isWritable(tx, i),
      }))
      : tx.accountKeys,
    header: parsed ? undefined : {
      numReadonlySignedAccounts: tx.numReadonlySigned,
      numReadonlyUnsignedAccounts: tx.numReadonlyUnsigned,
      numRequiredSignatures: tx.numRequiredSignatures,
    },
    instructions,
    recentBlockhash: tx.blockhash,
  };
  if (parsed) delete message.header;
  if (tx.version !== "legacy") message.addressTableLookups = tx.addressTableLookups;
  return message;
}

function transactionJson(record: TransactionRecord, encoding: string, includeVersion: boolean) {
  const tx = record.decoded;
  let transaction: unknown;
  if (encoding === "base64") transaction = [base64.encode(record.wire), "base64"];
  else if (encoding === "base58") transaction = [base58.encode(record.wire), "base58"];
  else {
    transaction = {
      message: messageJson(tx, encoding === "jsonParsed"),
      signatures: tx.signatures.map((s) => base58.encode(s)),
    };
  }
  const innerInstructions = encoding === "jsonParsed"
    ? record.innerInstructions.map(({ index, instructions }) => ({
      index,
      instructions: instructions.map((ix) => ({
        accounts: ix.accounts.map((i) => tx.accountKeys[i]),
        data: ix.data,
        programId: tx.accountKeys[ix.programIdIndex],
        stackHeight: ix.stackHeight,
      })),
    }))
    : record.innerInstructions;
  const meta: Record<string, unknown> = {
    computeUnitsConsumed: record.computeUnitsConsumed,
    err: record.err,
    fee: record.fee,
    innerInstructions,
    loadedAddresses: { readonly: [], writable: [] },
    logMessages: record.logs,
    postBalances: record.postBalances,
    postTokenBalances: record.postTokenBalances,
    preBalances: record.preBalances,
    preTokenBalances: record.preTokenBalances,
    rewards: [],
    status: record.err ? { Err: record.err } : { Ok: null },
  };
  if (record.returnData) meta.returnData = record.returnData;
  const out: Record<string, unknown> = {
    blockTime: record.blockTime,
    meta,
    slot: record.slot,
    transaction,
  };
  if (includeVersion) out.version = tx.version;
  return out;
}

export const historyMethods: Record<string, RpcHandler> = {
  getTransaction: (state, params) => {
    const signature = signatureParam(param(params, 0, "1 or 2 elements"));
    const config = typeof params[1] === "string" ? { encoding: params[1] } : configParam(params, 1);
    const slot = historySlot(state, commitmentSlot(state, atLeastConfirmed(config)));
    const encoding = (config.encoding as string | undefined) ?? "json";
    if (!["json", "jsonParsed", "base64", "base58"].includes(encoding)) {
      throw invalidParams(
        `Invalid params: unknown variant \`${encoding}\`, expected one of \`binary\`, \`base64\`, \`base58\`, \`json\`, \`jsonParsed\`.`,
      );
    }
    const record = state.transactions.get(signature);
    if (!record || record.slot > slot || isPruned(state, record)) return null;
    if (state.faults.hideStatuses) return null;
    const max = config.maxSupportedTransactionVersion as number | undefined;
    if (
      record.decoded.version !== "legacy" && (max === undefined || max < record.decoded.version)
    ) {
      throw new RpcError(
        -32015,
        `Transaction version (${record.decoded.version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${record.decoded.version}`,
      );
    }
    return transactionJson(record, encoding, max !== undefined);
  },
  getSignaturesForAddress: (state, params) => {
    const key = pubkeyParam(param(params, 0, "1 or 2 elements"));
    const config = configParam(params, 1);
    const slot = reachedMinContextSlot(
      historySlot(state, commitmentSlot(state, atLeastConfirmed(config))),
      config,
    );
    const limit = config.limit === undefined || config.limit === null ? 1000 : Number(config.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
      throw invalidParams("Invalid limit; max 1000");
    }
    let beforeSeq = Infinity;
    let untilSeq = -1;
    if (config.before) {
      const before = state.transactions.get(signatureParam(config.before));
      // The node answers an empty list when `before` is not in its ledger.
      if (!before || isPruned(state, before)) return [];
      beforeSeq = before.seq;
    }
    if (config.until) {
      const until = state.transactions.get(signatureParam(config.until));
      if (until) untilSeq = until.seq;
    }
    const list = state.transactionsByAddress.get(key) ?? [];
    const out = [];
    for (const record of list.toReversed()) {
      if (out.length >= limit) break;
      if (
        record.seq >=
          beforeSeq || record.slot > slot
      ) continue;
      if (record.seq <= untilSeq || isPruned(state, record)) break;
      out.push({
        blockTime: record.blockTime,
        confirmationStatus: confirmationStatus(state, record),
        err: record.err,
        memo: memoOf(record.decoded),
        signature: record.signature,
        slot: record.slot,
      });
    }
    return out;
  },
};

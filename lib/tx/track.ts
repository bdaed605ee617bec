/**
 * Sending a stored signed transaction and following it until it is final, as Solana recommends:
 * the same signed bytes are sent again while unconfirmed (never re-signed), and expiry is judged
 * against the transaction's own last valid block height, proven on the finalized chain.
 */
import {
  isSolanaError,
  type Rpc,
  type Signature,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type SolanaRpcApi,
} from "@solana/kit";
import type { Base64EncodedWireTransaction } from "@solana/kit";
import { transactionErrorJson } from "../chain/signature_status.ts";
import type { AppContext } from "../context.ts";
import { log } from "../log.ts";
import type { SignedTx, TxRequestRecord } from "../../kv/tx_requests.ts";
import { codedErrorText, isSimulationRejection, rpcFailureReason } from "./chain_errors.ts";
import { attemptRef, isFinal, settleAttempt, updateUnsettled } from "./settle.ts";
import { EXPIRED_ERROR } from "./types.ts";

/** Blocks past the last valid height after which a missing signature proves expiry (spec rule 2). */
export const EXPIRY_MARGIN_BLOCKS = 32n;

/** How one send went. */
export type SendOutcome =
  | { kind: "accepted" }
  /** The node simulated it and refused it (-32002): it was not forwarded. */
  | { kind: "rejected"; error: string; harmless: boolean }
  /** No answer or an unclear one: it may or may not have reached the network. */
  | { kind: "unknown"; reason: string };

/** Sends signed bytes once, with preflight until a node has accepted them, never retried by the node. */
export async function sendSignedTx(
  rpc: Rpc<SolanaRpcApi>,
  signed: SignedTx,
  options: { abortSignal?: AbortSignal } = {},
): Promise<SendOutcome> {
  try {
    await rpc.sendTransaction(signed.wire as Base64EncodedWireTransaction, {
      encoding: "base64",
      skipPreflight: signed.accepted,
      preflightCommitment: "confirmed",
      maxRetries: 0n,
    }).send({ abortSignal: options.abortSignal });
    return { kind: "accepted" };
  } catch (error) {
    if (isSimulationRejection(error)) {
      const cause = (error as { cause?: unknown }).cause;
      // An expired blockhash or an already landed copy says nothing about the transaction itself.
      const harmless = isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND) ||
        isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED);
      return { kind: "rejected", error: codedErrorText(error), harmless };
    }
    return { kind: "unknown", reason: rpcFailureReason(error) };
  }
}

/** What the chain says about a sent transaction. */
export type ChainCheck =
  | { kind: "confirmed" }
  | { kind: "failed"; error: string }
  | { kind: "expired" }
  /** Not final yet; `canLand` is false once the blockhash is too old to land anywhere. */
  | { kind: "unconfirmed"; landed: boolean; canLand: boolean };

/** Looks the signature up (whole history) and, when it is missing, whether its expiry is proven. */
export async function checkOnChain(
  rpc: Rpc<SolanaRpcApi>,
  signature: Signature,
  signed: SignedTx,
  options: { abortSignal?: AbortSignal } = {},
): Promise<ChainCheck> {
  const send = { abortSignal: options.abortSignal };
  const first = await rpc.getSignatureStatuses([signature], { searchTransactionHistory: true })
    .send(send);
  const found = statusCheck(first.value[0]);
  if (found) return found;
  const finalized = await rpc.getEpochInfo({ commitment: "finalized" }).send(send);
  if (finalized.blockHeight <= signed.lastValidBlockHeight + EXPIRY_MARGIN_BLOCKS) {
    return {
      kind: "unconfirmed",
      landed: false,
      canLand: finalized.blockHeight <= signed.lastValidBlockHeight,
    };
  }
  // Past the margin: a node that has seen that finalized slot must still have no record of it.
  const second = await rpc.getSignatureStatuses([signature], { searchTransactionHistory: true })
    .send(send);
  const late = statusCheck(second.value[0]);
  if (late) return late;
  if (second.context.slot < finalized.absoluteSlot) {
    return { kind: "unconfirmed", landed: false, canLand: false };
  }
  return { kind: "expired" };
}

type StatusValue = {
  err: unknown;
  confirmationStatus: "processed" | "confirmed" | "finalized" | null;
} | null;

function statusCheck(status: StatusValue): ChainCheck | null {
  if (!status) return null;
  const level = status.confirmationStatus;
  // A processed transaction may still be on a fork that is dropped, so only confirmed counts.
  if (level !== "confirmed" && level !== "finalized") {
    return { kind: "unconfirmed", landed: true, canLand: true };
  }
  if (status.err !== null) return { kind: "failed", error: transactionErrorJson(status.err) };
  return { kind: "confirmed" };
}

/**
 * One round of following an attempt: settles it when the chain has decided, otherwise sends the
 * same bytes again when `rebroadcast` is set and it can still land. Returns the record afterwards.
 * RPC failures leave the attempt as it is, for the next round.
 */
export async function checkAttempt(
  ctx: AppContext,
  record: TxRequestRecord,
  options: { rebroadcast: boolean },
): Promise<TxRequestRecord> {
  if (isFinal(record) || !record.signed || !record.signature) return record;
  const rpc = ctx.rpc[record.cluster];
  const signed = record.signed;
  const abortSignal = AbortSignal.timeout(ctx.tx.timing.rpcTimeoutMs);
  const fields = {
    projectId: record.projectId,
    idempotencyKey: record.key,
    signature: record.signature,
  };
  let check: ChainCheck;
  try {
    check = await checkOnChain(rpc, record.signature as Signature, signed, { abortSignal });
  } catch (error) {
    log("warn", "Transaction check failed; will retry", {
      ...fields,
      error: rpcFailureReason(error),
    });
    return record;
  }
  const ref = attemptRef(record);
  switch (check.kind) {
    case "confirmed":
      return (await settleAttempt(ctx, ref, { status: "confirmed" })) ?? record;
    case "failed":
      return (await settleAttempt(ctx, ref, { status: "failed", error: check.error })) ?? record;
    case "expired":
      return (await settleAttempt(ctx, ref, { status: "failed", error: EXPIRED_ERROR })) ?? record;
  }
  if (!options.rebroadcast || check.landed || !check.canLand) return record;
  const sent = await sendSignedTx(rpc, signed, { abortSignal });
  if (sent.kind === "accepted" && !signed.accepted) {
    return (await updateUnsettled(ctx, ref, (current) => ({
      ...current,
      signed: current.signed ? { ...current.signed, accepted: true } : null,
    }))) ?? record;
  }
  if (sent.kind === "rejected" && !sent.harmless && !signed.accepted) {
    // No node ever took it, and simulation now refuses it: it was never sent anywhere.
    return (await settleAttempt(ctx, ref, { status: "failed", error: sent.error })) ?? record;
  }
  if (sent.kind === "unknown") {
    log("warn", "Rebroadcast failed", { ...fields, reason: sent.reason });
  }
  return record;
}

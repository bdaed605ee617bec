/**
 * Sending a stored signed transaction and following it until it is final, as Solana recommends:
 * the same signed bytes are sent again while unconfirmed (never re-signed), and expiry is judged
 * against the transaction's own last valid block height, proven on the finalized chain.
 *
 * Once its signed bytes are stored, an attempt counts as possibly sent: from then on it ends only
 * as confirmed, landed and failed on-chain, or proven expired. A resend refused in preflight
 * (another payout draining the wallet, a top-up not yet confirmed) is logged and settles nothing;
 * only the first send's refusal may, and `send_and_wait.ts` decides that.
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
import type { TxContext } from "./runtime.ts";
import { log } from "../../core/log.ts";
import { getTxRequest, type SignedTx, type TxRequestRecord } from "../../kv/tx_requests.ts";
import { codedErrorText, isSimulationRejection, rpcFailureReason } from "./chain_errors.ts";
import { attemptRef, settleAttempt } from "./transitions.ts";
import { isFinal } from "./lifecycle.ts";
import { markAccepted, markExpiryUnproven } from "./attempt_marks.ts";
import { type CallSignals, callSignals } from "./timing.ts";
import { EXPIRED_ERROR } from "./result.ts";
import {
  type ChainVerdict,
  judgeMissingAttempt,
  landedVerdict,
  type SentAttempt,
  type StatusValue,
} from "./expiry_proof.ts";

/** How one send went. */
type SendOutcome =
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
    }).send(options);
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

/**
 * Looks the signature up (whole history); when it is missing, `judgeMissingAttempt` (the one rule
 * for a dead attempt) decides. `status` is the answer of a lookup just made (the sweep reads
 * statuses in batches).
 */
export async function confirmOnChain(
  rpc: Rpc<SolanaRpcApi>,
  tx: SentAttempt,
  options: { signals: CallSignals; status?: StatusValue | undefined },
): Promise<ChainVerdict> {
  const { signals } = options;
  const first = options.status !== undefined ? options.status : (await rpc.getSignatureStatuses(
    [tx.signature],
    { searchTransactionHistory: true },
  ).send({ abortSignal: signals() })).value[0] ?? null;
  return first ? landedVerdict(first) : await judgeMissingAttempt(rpc, tx, signals);
}

/**
 * One round of following an attempt: re-reads the stored record, settles it when the chain has
 * decided, otherwise sends the same bytes again when `rebroadcast` is set and it can still land.
 * Returns the record afterwards. RPC failures leave the attempt as it is, for the next round.
 */
export async function confirmAttempt(
  ctx: TxContext,
  known: TxRequestRecord,
  options: { rebroadcast: boolean; status?: StatusValue | undefined; signals?: CallSignals },
): Promise<TxRequestRecord> {
  // Another path (the route, a confirmation job, the sweep, another instance) may have settled it.
  const record = await getTxRequest(ctx.kv, known.projectId, known.key) ?? known;
  if (record.attemptId !== known.attemptId) return record;
  if (isFinal(record) || !record.signed || !record.signature) return record;
  const rpc = ctx.rpc[record.cluster];
  const signed = record.signed;
  const signals = options.signals ?? callSignals(ctx.tx.timing);
  const fields = {
    projectId: record.projectId,
    idempotencyKey: record.key,
    signature: record.signature,
  };
  let verdict: ChainVerdict;
  try {
    verdict = await confirmOnChain(rpc, {
      signature: record.signature as Signature,
      signed,
      attemptId: record.attemptId,
    }, { signals, status: options.status });
  } catch (error) {
    log("warn", "Transaction check failed; will retry", {
      ...fields,
      error: rpcFailureReason(error),
    });
    return record;
  }
  const ref = attemptRef(record);
  switch (verdict.kind) {
    case "confirmed":
      return (await settleAttempt(ctx, ref, { status: "confirmed" })) ?? record;
    case "failed":
      return (await settleAttempt(ctx, ref, { status: "failed", error: verdict.error })) ?? record;
    case "expired":
      return (await settleAttempt(ctx, ref, { status: "failed", error: EXPIRED_ERROR })) ?? record;
    case "unproven":
      if (record.expiryUnprovenAt !== undefined) return record;
      log("warn", "Expiry cannot be proven: the attempt stays open and needs attention", fields);
      return (await markExpiryUnproven(ctx, ref)) ?? record;
  }
  if (!options.rebroadcast || verdict.landed || !verdict.canLand) return record;
  const sent = await sendSignedTx(rpc, signed, { abortSignal: signals() });
  if (sent.kind === "accepted" && !signed.accepted) {
    return (await markAccepted(ctx, ref)) ?? record;
  }
  if (sent.kind === "rejected" && !sent.harmless) {
    // An earlier copy may still land: only the chain decides from here.
    log("warn", "Resend refused in preflight; the attempt stays open", {
      ...fields,
      error: sent.error,
    });
  }
  if (sent.kind === "unknown") {
    log("warn", "Rebroadcast failed", { ...fields, reason: sent.reason });
  }
  return record;
}

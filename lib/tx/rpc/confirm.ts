/**
 * The chain side of following a stored signed transaction, as Solana recommends: the same signed
 * bytes sent again while unconfirmed (never re-signed, `sendSignedTx`), and a look at its status
 * that judges a missing one against the transaction's own last valid block height, proven on the
 * finalized chain (`confirmOnChain`). `follower.ts` runs them.
 *
 * Once its signed bytes are stored, an attempt counts as possibly sent: from then on it ends only
 * as confirmed, landed and failed on-chain, or proven expired. A resend refused in preflight
 * (another payout draining the wallet, a top-up not yet confirmed) settles nothing; only the first
 * send's refusal may, and `send_and_wait.ts` decides that.
 */
import {
  isSolanaError,
  type Rpc,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  type SolanaRpcApi,
} from "@solana/kit";
import type { Base64EncodedWireTransaction } from "@solana/kit";
import type { SignedTx } from "../../../kv/tx_requests.ts";
import { codedErrorText, isSimulationRejection, rpcFailureReason } from "./chain_errors.ts";
import type { CallSignals } from "./timing.ts";
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

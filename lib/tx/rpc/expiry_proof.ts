/**
 * The one rule for "this attempt is dead" (expired without landing). Settling an attempt as
 * expired, proving a failed key's last attempt dead before a retry signs anew, and the sweep all
 * reach it through `confirmOnChain` (`confirm.ts`); nothing else concludes an attempt is dead.
 *
 * A node's `null` for the signature proves nothing on its own: a node run without transaction
 * history once its status cache has rolled over, or a pool whose members lag, answers `null` for a
 * landed transaction while claiming its whole history. So expiry needs two independent proofs, each
 * from an answer whose context has seen the finalized slot past the expiry margin:
 *
 * | Proof     | Holds when                                                                        |
 * | --------- | --------------------------------------------------------------------------------- |
 * | 1. Status | the status lookup (whole history) has no record of the signature                  |
 * | 2. Wallet | the managed wallet's own signature history (`getSignaturesForAddress`; the fee    |
 * |           | payer signs every attempt), read back to the blockhash's slot at                  |
 * |           | `minContextSlot`, does not hold it: a lagging node refuses rather than answering  |
 * |           | from before the landing                                                           |
 *
 * | Otherwise                     | Verdict                                                       |
 * | ----------------------------- | ------------------------------------------------------------- |
 * | The wallet's history holds it | its entry decides                                             |
 * | A node cannot answer proof 2  | no proof (no address history, behind that slot)               |
 * | A failed transport            | only the round fails                                          |
 * | Not both proofs               | `unproven`: it stays `submitted`, no new attempt is signed,   |
 * |                               | and it is looked at less and less often (`confirm_job.ts`)    |
 */
import type { Address, Rpc, Signature, SolanaRpcApi } from "@solana/kit";
import { getTransactionDecoder } from "@solana/kit";
import { transactionErrorJson } from "../../chain/signature_status.ts";
import type { SignedTx } from "../../../kv/tx_requests.ts";
import type { CallSignals } from "./timing.ts";
import { isTransportFailure } from "./chain_errors.ts";

/** What the chain says about a sent transaction. */
export type ChainVerdict =
  | { kind: "confirmed" }
  | { kind: "failed"; error: string }
  | { kind: "expired" }
  /** Not final yet; `canLand` is false once the blockhash is too old to land anywhere. */
  | { kind: "unconfirmed"; landed: boolean; canLand: boolean }
  /** Past the expiry margin, but the proof that it did not land cannot be had (yet). */
  | { kind: "unproven" };

/** A signature's status as `getSignatureStatuses` answers it (null when unknown). */
export type StatusValue = {
  err: unknown;
  confirmationStatus: "processed" | "confirmed" | "finalized" | null;
} | null;

/** The attempt a proof is about. */
export interface SentAttempt {
  signature: Signature;
  signed: SignedTx;
  attemptId: string;
}

/** Blocks past the last valid height after which a missing signature may prove expiry (spec rule 2). */
const EXPIRY_MARGIN_BLOCKS = 32n;

/**
 * Called when a status lookup found no record of the attempt: whether it can still land, and once
 * the finalized chain is past the expiry margin, the proof of its expiry by both rules above (or
 * what the chain showed instead).
 */
export async function judgeMissingAttempt(
  rpc: Rpc<SolanaRpcApi>,
  tx: SentAttempt,
  signals: CallSignals,
): Promise<ChainVerdict> {
  const finalized = await rpc.getEpochInfo({ commitment: "finalized" }).send({
    abortSignal: signals(),
  });
  const lastValid = tx.signed.lastValidBlockHeight;
  if (finalized.blockHeight <= lastValid + EXPIRY_MARGIN_BLOCKS) {
    return { kind: "unconfirmed", landed: false, canLand: finalized.blockHeight <= lastValid };
  }
  const options = { finalizedSlot: finalized.absoluteSlot, signals };
  // 1. A node that has seen that finalized slot must still have no record of it.
  const lookup = await rpc.getSignatureStatuses([tx.signature], { searchTransactionHistory: true })
    .send({ abortSignal: signals() });
  const found = lookup.value[0];
  if (found) return landedVerdict(found);
  if (lookup.context.slot < options.finalizedSlot) return { kind: "unproven" };
  // 2. And the wallet's own history, back past the blockhash, must not hold it either.
  return await searchWalletHistory(rpc, tx, options);
}

/** The verdict on a transaction the node has a record of. */
export function landedVerdict(status: NonNullable<StatusValue>): ChainVerdict {
  const level = status.confirmationStatus;
  // A processed transaction may still be on a fork that is dropped, so only confirmed counts.
  if (level !== "confirmed" && level !== "finalized") {
    return { kind: "unconfirmed", landed: true, canLand: true };
  }
  if (status.err !== null) return { kind: "failed", error: transactionErrorJson(status.err) };
  return { kind: "confirmed" };
}

// Pages of 1,000 read at most: a wallet that made 5,000 transactions since the blockhash (far
// beyond the 1,000 a day a project may send) leaves the attempt unproven rather than unbounded.
const HISTORY_PAGES = 5;
const PAGE = 1000;

/**
 * Reads the managed wallet's signature history, newest first, from a node that has seen
 * `finalizedSlot`: expired when it reaches the blockhash's slot without the attempt; the entry's
 * verdict when it holds the signature; unproven when it ends first (pruned) or names the attempt
 * under another signature (only an unknown writer could).
 */
async function searchWalletHistory(
  rpc: Rpc<SolanaRpcApi>,
  tx: SentAttempt,
  options: { finalizedSlot: bigint; signals: CallSignals },
): Promise<ChainVerdict> {
  const wallet = feePayerOf(tx.signed);
  const from = tx.signed.blockhashSlot;
  let before: Signature | undefined;
  for (let page = 0; page < HISTORY_PAGES; page++) {
    const abortSignal = options.signals();
    let list;
    try {
      list = await rpc.getSignaturesForAddress(wallet, {
        commitment: "confirmed",
        minContextSlot: options.finalizedSlot,
        limit: PAGE,
        ...(before ? { before } : {}),
      }).send({ abortSignal });
    } catch (error) {
      // The node's own answer that it cannot (no address history, behind that slot, no such
      // method) gives no proof; a lost connection, a 5xx or a time-out is a failed round, tried
      // again on the next one.
      if (abortSignal.aborted || isTransportFailure(error)) throw error;
      return { kind: "unproven" };
    }
    for (const item of list) {
      if (item.signature === tx.signature) return landedVerdict(item);
      if (item.memo?.includes(tx.attemptId)) return { kind: "unproven" };
      if (item.slot <= from) return { kind: "expired" };
    }
    const last = list.at(-1);
    if (list.length < PAGE || !last) return { kind: "unproven" };
    before = last.signature;
  }
  return { kind: "unproven" };
}

function feePayerOf(signed: SignedTx): Address {
  const bytes = Uint8Array.from(atob(signed.wire), (c) => c.charCodeAt(0));
  return Object.keys(getTransactionDecoder().decode(bytes).signatures)[0] as Address;
}

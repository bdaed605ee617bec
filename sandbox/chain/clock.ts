// Slots, block heights, blockhashes and commitment levels, advancing like a real cluster's.
import { base58 } from "@scure/base";
import { Clock } from "litesvm";
import {
  type BlockRecord,
  type Commitment,
  type LedgerState,
  MAX_PROCESSING_AGE,
  PRIORITIZATION_FEE_SLOTS,
  STATUS_CACHE_SLOTS,
} from "./state.ts";

/** Records the block of the current slot and syncs the SVM's Clock sysvar with it. */
export function openBlock(state: LedgerState): BlockRecord {
  const block: BlockRecord = {
    slot: state.slot,
    blockHeight: state.blockHeight,
    blockhash: base58.encode(crypto.getRandomValues(new Uint8Array(32))),
    blockTime: state.startUnix + Math.floor((state.slot * state.options.slotMs) / 1000),
  };
  state.blocksBySlot.set(block.slot, block);
  state.blocksByHash.set(block.blockhash, block);
  const slotsPerEpoch = 432_000;
  const epoch = BigInt(Math.floor(block.slot / slotsPerEpoch));
  state.svm.setClock(
    new Clock(
      BigInt(block.slot),
      BigInt(state.startUnix),
      epoch,
      epoch + 1n,
      BigInt(block.blockTime),
    ),
  );
  return block;
}

/** The slot a read at this commitment sees. */
export function commitmentSlot(state: LedgerState, commitment: Commitment | undefined): number {
  switch (commitment ?? "finalized") {
    case "processed":
      return state.slot;
    case "confirmed":
      return Math.max(state.finalizedSlot, state.slot - state.options.confirmedLag, 0);
    default:
      return state.finalizedSlot;
  }
}

export function blockAt(state: LedgerState, slot: number): BlockRecord {
  const block = state.blocksBySlot.get(slot);
  if (!block) throw new Error(`Cannot find block: slot ${slot} was pruned`);
  return block;
}

/** Blocks between the blockhash's block and the bank at `slot`, or null if that bank does not know it. */
export function blockhashAge(state: LedgerState, blockhash: string, slot: number): number | null {
  const block = state.blocksByHash.get(blockhash);
  if (!block || block.slot > slot) return null;
  return blockAt(state, slot).blockHeight - block.blockHeight;
}

export function isBlockhashUsable(
  state: LedgerState,
  blockhash: string,
  slot: number,
  maxAge: number,
): boolean {
  const age = blockhashAge(state, blockhash, slot);
  return age !== null && age <= maxAge;
}

/** Moves the cluster on by one slot: new block, commitment levels, pruning. */
export function stepSlot(state: LedgerState): void {
  state.slot += 1;
  state.blockHeight += 1;
  openBlock(state);
  if (!state.faults.finalizationPaused) {
    state.finalizedSlot = Math.max(state.finalizedSlot, state.slot - state.options.finalizedLag, 0);
  }
  pruneHistory(state);
}

function pruneHistory(state: LedgerState): void {
  // Keep every block a commitment level can still point at, plus the blockhash queue.
  const keepFrom = Math.min(
    state.finalizedSlot,
    state.slot - Math.max(MAX_PROCESSING_AGE, STATUS_CACHE_SLOTS, PRIORITIZATION_FEE_SLOTS) - 1,
  );
  for (const [slot, block] of state.blocksBySlot) {
    if (slot >= keepFrom) break;
    state.blocksBySlot.delete(slot);
    state.blocksByHash.delete(block.blockhash);
  }
  for (const slot of state.slotFees.keys()) {
    if (slot >= state.slot - PRIORITIZATION_FEE_SLOTS) break;
    state.slotFees.delete(slot);
  }
  // Account versions older than the finalized one are invisible to every commitment.
  for (const [address, versions] of state.accountVersions) {
    const base = Math.max(0, versions.findLastIndex((v) => v.slot <= state.finalizedSlot));
    if (base === versions.length - 1) state.accountVersions.delete(address);
    else if (base > 0) versions.splice(0, base);
  }
}

// Cluster-level methods: health, version, slots, blockhashes, rent, fees.
import { blockAt, blockhashAge } from "./clock.ts";
import { invalidParam, invalidParams } from "./rpc_errors.ts";
import { bankSlot, configParam, context, integerParam, param, pubkeyParam } from "./rpc_params.ts";
import type { RpcHandler } from "./rpc_dispatch.ts";
import { type LedgerState, MAX_PROCESSING_AGE, PRIORITIZATION_FEE_SLOTS } from "./state.ts";

export const SOLANA_CORE_VERSION = "2.3.13";
const FEATURE_SET = 3_294_202_862;

function slotOf(state: LedgerState, params: unknown[]): number {
  return bankSlot(state, configParam(params, 0));
}

export const clusterMethods: Record<string, RpcHandler> = {
  getHealth: () => "ok",
  getVersion: () => ({ "feature-set": FEATURE_SET, "solana-core": SOLANA_CORE_VERSION }),
  getGenesisHash: (state) => state.genesisHash,
  getSlot: (state, params) => slotOf(state, params),
  getBlockHeight: (state, params) => blockAt(state, slotOf(state, params)).blockHeight,
  getEpochInfo: (state, params) => {
    const slot = slotOf(state, params);
    const slotsInEpoch = 432_000;
    return {
      absoluteSlot: slot,
      blockHeight: blockAt(state, slot).blockHeight,
      epoch: Math.floor(slot / slotsInEpoch),
      slotIndex: slot % slotsInEpoch,
      slotsInEpoch,
      transactionCount: state.nextSeq,
    };
  },
  // The oldest slot the node still has, for blocks and for its ledger alike.
  getFirstAvailableBlock: (state) => state.faults.firstAvailableSlot,
  minimumLedgerSlot: (state) => state.faults.firstAvailableSlot,
  getLatestBlockhash: (state, params) => {
    const slot = slotOf(state, params);
    const block = blockAt(state, slot);
    return {
      context: context(slot),
      value: {
        blockhash: block.blockhash,
        lastValidBlockHeight: block.blockHeight + MAX_PROCESSING_AGE,
      },
    };
  },
  isBlockhashValid: (state, params) => {
    const hash = param<string>(params, 0, "1 or 2 elements");
    pubkeyParam(hash);
    const slot = bankSlot(state, configParam(params, 1));
    const age = blockhashAge(state, hash, slot);
    return { context: context(slot), value: age !== null && age <= MAX_PROCESSING_AGE };
  },
  getMinimumBalanceForRentExemption: (state, params) => {
    const length = integerParam(param(params, 0, "1 or 2 elements"), "usize");
    return state.svm.minimumBalanceForRentExemption(BigInt(length));
  },
  getRecentPrioritizationFees: (state, params) => {
    const keys = params[0] ?? [];
    if (!Array.isArray(keys)) {
      throw invalidParams("Invalid params: invalid type, expected a sequence.");
    }
    if (keys.length > 128) throw invalidParam("Too many inputs provided; max 128");
    keys.forEach(pubkeyParam);
    const out: { slot: number; prioritizationFee: bigint }[] = [];
    const from = Math.max(0, state.slot - PRIORITIZATION_FEE_SLOTS + 1);
    for (let slot = from; slot <= state.slot; slot++) {
      const fees = state.slotFees.get(slot);
      let fee = fees?.min ?? 0n;
      for (const key of keys as string[]) {
        const accountFee = fees?.byAccount.get(key);
        if (accountFee !== undefined && accountFee > fee) fee = accountFee;
      }
      out.push({ slot, prioritizationFee: fee });
    }
    return out;
  },
};

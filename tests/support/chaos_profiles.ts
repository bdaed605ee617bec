/**
 * The faults of a chaos round: what the RPC node in front of the cluster does (`RpcFaults`), what
 * the cluster itself does (the sandbox's fault control), and how the round moves time. Every round
 * also kills the service with SIGKILL; the profiles add the RPC's misbehaviour on top, as a
 * deployment meets it: lost answers, 503s, time-outs, a slow node, statuses that lag, transactions
 * that land late or never, a blockhash that expires quickly, and a node that hides landed
 * transactions while claiming its whole history.
 */
import type { SandboxChain } from "../../sandbox/chain/mod.ts";
import { defaultTxTiming, type TxTiming } from "../../lib/tx/rpc/timing.ts";
import type { RpcFaults } from "./rpc_fault_proxy.ts";

/** One kind of round. */
export interface ChaosProfile {
  name: string;
  /** The node's faults, armed from the round's start until the truth is shown again. */
  rpc: RpcFaults;
  /** Arms the cluster's own faults at the round's start. */
  chain?: (chain: SandboxChain) => void;
  /** Slots the cluster jumps just before the kill: the round's blockhashes expire at once. */
  jumpSlots?: number;
  /** The service's timing in this round (the short chaos timing unless given). */
  timing?: Partial<TxTiming>;
  /** The kill comes at a random moment within this many ms of the round's first send. */
  killWithinMs: number;
  /** How long the faults stay after the restart, while clients resend and poll. */
  faultyMs: number;
}

/** Short waits so a round ends in seconds; every rule keeps its shape (deadline, wait, sign-by). */
export const CHAOS_TIMING: Partial<TxTiming> = {
  answerWithinMs: 3_000,
  confirmWaitMs: 1_500,
  routePollMs: 100,
  rebroadcastMs: 500,
  abandonMarginMs: 500,
  rpcTimeoutMs: 2_000,
};

// More slots than a blockhash lives (150) plus the expiry margin (32) and finalization (32).
const PAST_EXPIRY = 250;

/** Every profile, in the order rounds take them. */
export const CHAOS_PROFILES: readonly ChaosProfile[] = [
  { name: "kill", rpc: {}, killWithinMs: 400, faultyMs: 0 },
  {
    name: "lost answers",
    rpc: { lostSendAnswers: 0.7, unavailable: 0.1 },
    killWithinMs: 1_500,
    faultyMs: 3_000,
  },
  {
    name: "503s and time-outs",
    rpc: { unavailable: 0.25, hang: 0.05 },
    killWithinMs: 1_500,
    faultyMs: 3_000,
  },
  {
    name: "hiding node",
    rpc: { lostSendAnswers: 1 },
    chain: (chain) => chain.faults.hideStatuses(true),
    jumpSlots: PAST_EXPIRY,
    killWithinMs: 1_000,
    faultyMs: 3_000,
  },
  {
    name: "hiding node without address history",
    rpc: { lostSendAnswers: 1, noAddressHistory: true },
    chain: (chain) => chain.faults.hideStatuses(true),
    jumpSlots: PAST_EXPIRY,
    killWithinMs: 1_000,
    faultyMs: 3_000,
  },
  {
    name: "lagging statuses, late landing",
    rpc: { unavailable: 0.05 },
    chain: (chain) => {
      chain.faults.lagHistory(40);
      chain.faults.delayLanding(2, { slots: 60 });
    },
    killWithinMs: 1_500,
    faultyMs: 3_000,
  },
  {
    name: "never lands, quick expiry",
    rpc: { lostSendAnswers: 0.3 },
    chain: (chain) => chain.faults.neverLand(2),
    jumpSlots: PAST_EXPIRY,
    killWithinMs: 1_500,
    faultyMs: 3_000,
  },
  {
    name: "slow node",
    rpc: { delayMs: [500, 5_000], unavailable: 0.1 },
    timing: defaultTxTiming(),
    killWithinMs: 8_000,
    faultyMs: 10_000,
  },
];

/** The profile of round `round`: every profile in turn. */
export function profileOf(round: number): ChaosProfile {
  const profile = CHAOS_PROFILES[round % CHAOS_PROFILES.length];
  if (!profile) throw new Error("No chaos profiles");
  return profile;
}

/** The round's timing: the chaos timing with the profile's own on top. */
export function timingOf(profile: ChaosProfile): Partial<TxTiming> {
  return { ...CHAOS_TIMING, ...profile.timing };
}

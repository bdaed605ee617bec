/**
 * Held rewards written straight into the store, as the service stores them (`kv/rewards.ts`): the
 * record, its indexes and the project's held totals in one checked commit, for the pages'
 * tests, which read rewards and need not grant them through the money path; and the token they
 * name.
 */
import {
  heldTotalKey,
  isHolding,
  openRewardKey,
  rewardAsset,
  rewardByPlayerKey,
  rewardKey,
  type RewardRecord,
} from "../../kv/rewards.ts";
import { createFundedSigner, createMint } from "../../sandbox/chain/fixtures.ts";
import { type SandboxChain, writeTokenMetadata } from "../../sandbox/chain/mod.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/** A held SOL reward of 0.5 for player 1002 from `now`, with `fields` over it. */
export function rewardRecord(
  fields: Partial<RewardRecord> & { key: string },
  now = Date.now(),
): RewardRecord {
  return {
    userId: 1002,
    kind: "transfer-sol",
    mint: null,
    amount: "0.5",
    units: "500000000",
    status: "held",
    waitingFor: "wallet",
    recipient: null,
    signature: null,
    error: null,
    createdAt: now,
    expiresAt: now + 30 * DAY_MS,
    settledAt: null,
    ...fields,
  };
}

/** What a reward adds to its asset's held total: its units while held or paying. */
function heldUnits(reward: RewardRecord | null): bigint {
  return reward && isHolding(reward) ? BigInt(reward.units) : 0n;
}

/** Writes the reward (new or changed) with its index entries and its asset's held total. */
export async function putReward(
  kv: Deno.Kv,
  projectId: string,
  reward: RewardRecord,
): Promise<void> {
  const key = rewardKey(projectId, reward.key);
  const totalKey = heldTotalKey(projectId, rewardAsset(reward));
  for (let attempt = 0; attempt < 10; attempt++) {
    const [before, total] = await kv.getMany<[RewardRecord, Deno.KvU64]>([key, totalKey]);
    const held = (total.value?.value ?? 0n) - heldUnits(before.value) + heldUnits(reward);
    const op = kv.atomic()
      .check(before, total)
      .set(key, reward)
      .set(rewardByPlayerKey(projectId, reward), reward.key)
      .set(totalKey, new Deno.KvU64(held));
    if (isHolding(reward)) op.set(openRewardKey(projectId, reward), reward.key);
    else op.delete(openRewardKey(projectId, reward));
    const committed = await op.commit();
    if (committed.ok) return;
  }
  throw new Error(`Cannot write reward ${reward.key}: the store kept changing`);
}

/** The reward paid to `recipient` with `signature` at `now`. */
export function paidReward(
  reward: RewardRecord,
  recipient: string,
  signature: string,
  now = Date.now(),
): RewardRecord {
  return { ...reward, status: "paid", waitingFor: null, recipient, signature, settledAt: now };
}

/** A token of 2 decimals named Gems (GEM) by its metadata, and the funded payer that made it. */
export async function createGemMint(chain: SandboxChain) {
  const payer = await createFundedSigner(chain);
  const gem = await createMint(chain, { payer, decimals: 2 });
  await writeTokenMetadata(chain, gem, {
    updateAuthority: payer.address,
    name: "Gems",
    symbol: "GEM",
  });
  return { gem, payer };
}

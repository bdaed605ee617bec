/**
 * Rewards granted to players by user id (`/v1/rewards`, an extension): held while the player has
 * no wallet, paid when they link. A reward's payment is a transaction request under the key
 * `reward:<key>` (`kv/tx_requests.ts`), so it takes the payout's path; this record says what is
 * owed and to whom. The player index and the held totals move in the same commit as the record.
 */
import type { TxKind } from "../core/events.ts";
import type { KvReader } from "./read_batches.ts";

/** A reward's status as the API states it. */
export type RewardStatus = "held" | "paying" | "paid" | "cancelled" | "expired";

/** Why a held reward waits: no wallet linked, no room in the limits, or a failed payment. */
export type RewardWait = "wallet" | "room" | "retry";

/** A reward as stored. */
export interface RewardRecord {
  key: string;
  userId: number;
  kind: TxKind;
  /** The mint of a token reward, null for SOL. */
  mint: string | null;
  /** The amount as granted (decimal text, as the request sent it). */
  amount: string;
  /** The amount in the asset's base units. */
  units: string;
  status: RewardStatus;
  /** Set while `held`, null otherwise. */
  waitingFor: RewardWait | null;
  /** The wallet it is being or was paid to. */
  recipient: string | null;
  signature: string | null;
  /** The last payment's error while it waits to be paid again. */
  error: string | null;
  createdAt: number;
  expiresAt: number;
  /** When it was paid, cancelled or expired. */
  settledAt: number | null;
}

/** The asset a reward pays: `sol`, or the mint. */
export function rewardAsset(reward: Pick<RewardRecord, "mint">): string {
  return reward.mint ?? "sol";
}

/** The key of a reward's payment in the transaction requests. */
export function rewardTxKey(key: string): string {
  return `reward:${key}`;
}

export function rewardKey(projectId: string, key: string): Deno.KvKey {
  return ["rewards", projectId, key];
}

/** The index of a player's rewards, by key. */
export function rewardByPlayerKey(projectId: string, userId: number, key: string): Deno.KvKey {
  return ["rewards_by_player", projectId, userId, key];
}

/** Base units (a `Deno.KvU64`) of the project's held and paying rewards of one asset. */
export function heldTotalKey(projectId: string, asset: string): Deno.KvKey {
  return ["reward_held_totals", projectId, asset];
}

export async function getReward(
  kv: KvReader,
  projectId: string,
  key: string,
): Promise<Deno.KvEntryMaybe<RewardRecord>> {
  return await kv.get<RewardRecord>(rewardKey(projectId, key));
}

/** A player's rewards, newest first, at most `limit`. */
export async function listRewardsOfPlayer(
  kv: Deno.Kv,
  projectId: string,
  userId: number,
  limit = 100,
): Promise<RewardRecord[]> {
  const keys: string[] = [];
  for await (const entry of kv.list({ prefix: ["rewards_by_player", projectId, userId] })) {
    keys.push(entry.key[3] as string);
  }
  const rewards: RewardRecord[] = [];
  for (let i = 0; i < keys.length; i += 10) {
    const entries = await kv.getMany<RewardRecord[]>(
      keys.slice(i, i + 10).map((key) => rewardKey(projectId, key)),
    );
    for (const entry of entries) if (entry.value) rewards.push(entry.value);
  }
  rewards.sort((a, b) => b.createdAt - a.createdAt);
  return rewards.slice(0, limit);
}

/** What the project holds for players, by asset (`sol` or the mint), in base units. */
export async function heldTotals(kv: Deno.Kv, projectId: string): Promise<Map<string, bigint>> {
  const totals = new Map<string, bigint>();
  for await (
    const entry of kv.list<Deno.KvU64>({ prefix: ["reward_held_totals", projectId] })
  ) {
    if (entry.value.value > 0n) totals.set(entry.key[2] as string, entry.value.value);
  }
  return totals;
}

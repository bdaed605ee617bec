/**
 * Rewards granted to players by user id (`/v1/rewards`, an extension): held while the player has
 * no wallet, paid when they link. A reward's payment is a transaction request under the key
 * `reward:<key>` (`kv/tx_requests.ts`), so it takes the payout's path; this record says what is
 * owed and to whom. The indexes and the held totals move in the same commit as the record: the
 * player's rewards and the project's open ones (held or paying), both ordered by creation, so a
 * page reads only the entries it answers.
 *
 * What a reward holds (its base units while `held` or `paying`) counts twice: in the project's
 * total of the asset (a `Deno.KvU64`, summed without a check: the dashboard's liabilities) and in
 * its player's holds (checked, so the policy's cap per player is never passed by concurrent grants,
 * and so a link commit checked on them knows whether the player has rewards to pay).
 */
import type { TxKind } from "../core/events.ts";
import { getManyAtOnce } from "./get_many.ts";
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

/** The reward whose payment has the transaction request key `txKey`; null for a route's key. */
export function rewardOfTxKey(txKey: string): string | null {
  const prefix = rewardTxKey("");
  return txKey.startsWith(prefix) ? txKey.slice(prefix.length) : null;
}

export function rewardKey(projectId: string, key: string): Deno.KvKey {
  return ["rewards", projectId, key];
}

/** The index of a player's rewards, by creation (then key). */
export function rewardByPlayerKey(
  projectId: string,
  reward: Pick<RewardRecord, "userId" | "createdAt" | "key">,
): Deno.KvKey {
  return ["player_rewards", projectId, reward.userId, reward.createdAt, reward.key];
}

/** The index of the project's open rewards (held or paying), by creation (then key). */
export function openRewardKey(
  projectId: string,
  reward: Pick<RewardRecord, "createdAt" | "key">,
): Deno.KvKey {
  return ["open_rewards", projectId, reward.createdAt, reward.key];
}

/** What one player's held and paying rewards hold, by asset (`rewardAsset`), in base units. */
export type RewardHolds = Record<string, bigint>;

/** Key of a player's holds (absent while they hold nothing). */
export function rewardHoldsKey(projectId: string, userId: number): Deno.KvKey {
  return ["reward_holds", projectId, userId];
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

/**
 * A player's rewards, newest first (those of one millisecond by key), at most `limit`. Reads the
 * index from the newest down to the `limit`-th entry and the rest of its millisecond, which the
 * reverse listing gives in the opposite key order (each millisecond's run is turned back).
 */
export async function listRewardsOfPlayer(
  kv: Deno.Kv,
  projectId: string,
  userId: number,
  limit = 100,
): Promise<RewardRecord[]> {
  const runs: string[][] = [];
  let count = 0;
  let last: number | null = null;
  const entries = kv.list<string>({ prefix: ["player_rewards", projectId, userId] }, {
    reverse: true,
    ...(Number.isFinite(limit) ? { batchSize: Math.min(limit + 1, 1_000) } : {}),
  });
  for await (const entry of entries) {
    const createdAt = entry.key[3] as number;
    if (createdAt !== last) {
      if (count >= limit) break;
      runs.push([]);
      last = createdAt;
    }
    runs.at(-1)!.push(entry.value);
    count++;
  }
  const keys = runs.flatMap((run) => run.reverse()).slice(0, limit);
  const found = await getManyAtOnce<RewardRecord>(kv, keys.map((key) => rewardKey(projectId, key)));
  return found.flatMap((entry) => entry.value ? [entry.value] : []);
}

/** A page of the project's open rewards (held or paying), newest first, and the next page's cursor. */
export async function listOpenRewards(
  kv: Deno.Kv,
  projectId: string,
  options: { limit: number; cursor?: string },
): Promise<{ rewards: RewardRecord[]; cursor: string | null }> {
  const entries = kv.list<string>({ prefix: ["open_rewards", projectId] }, {
    reverse: true,
    limit: options.limit,
    ...(options.cursor ? { cursor: options.cursor } : {}),
  });
  const keys: string[] = [];
  for await (const entry of entries) keys.push(entry.value);
  const found = await getManyAtOnce<RewardRecord>(kv, keys.map((key) => rewardKey(projectId, key)));
  // One settled between the listing and the read is left out: the page lists open ones.
  const rewards = found.flatMap((entry) =>
    entry.value && isHolding(entry.value) ? [entry.value] : []
  );
  return { rewards, cursor: keys.length === options.limit ? entries.cursor : null };
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

/** Returns a player's holds entry (versionstamp null while they hold nothing). */
export function getRewardHoldsEntry(
  kv: KvReader,
  projectId: string,
  userId: number,
): Promise<Deno.KvEntryMaybe<RewardHolds>> {
  return kv.get<RewardHolds>(rewardHoldsKey(projectId, userId));
}

/** True while a reward holds its units against its player and the project's totals. */
export function isHolding(reward: Pick<RewardRecord, "status">): boolean {
  return reward.status === "held" || reward.status === "paying";
}

/**
 * Appends to `op` the creation of `reward` (checked new), its entries in the player's and the open
 * rewards' indexes, and its units added to the player's holds (read as `holds`, checked) and to
 * the project's total.
 */
export function addRewardCreation(
  op: Deno.AtomicOperation,
  projectId: string,
  reward: RewardRecord,
  holds: Deno.KvEntryMaybe<RewardHolds>,
): void {
  const key = rewardKey(projectId, reward.key);
  op.check({ key, versionstamp: null }).set(key, reward)
    .set(rewardByPlayerKey(projectId, reward), reward.key)
    .set(openRewardKey(projectId, reward), reward.key);
  addHoldsChange(op, projectId, reward, holds, BigInt(reward.units));
}

/**
 * Appends to `op` a reward's move from its `entry` (checked) to `next`; when it stops holding
 * (paid, cancelled, expired), it leaves the open rewards' index and its units leave the player's
 * holds (read as `holds`, checked) and the project's total.
 */
export function addRewardMove(
  op: Deno.AtomicOperation,
  projectId: string,
  entry: Deno.KvEntry<RewardRecord>,
  next: RewardRecord,
  holds: Deno.KvEntryMaybe<RewardHolds>,
): void {
  op.check(entry).set(entry.key, next);
  if (isHolding(entry.value) && !isHolding(next)) {
    op.delete(openRewardKey(projectId, next));
    addHoldsChange(op, projectId, next, holds, -BigInt(next.units));
  }
}

const U64 = 2n ** 64n;

// The player's holds and the project's total of the reward's asset, moved by `units` (negative to
// give back: the total wraps modulo 2^64, which a sum of what was added before always undoes).
function addHoldsChange(
  op: Deno.AtomicOperation,
  projectId: string,
  reward: RewardRecord,
  holds: Deno.KvEntryMaybe<RewardHolds>,
  units: bigint,
): void {
  const asset = rewardAsset(reward);
  const next: RewardHolds = { ...holds.value };
  const held = (next[asset] ?? 0n) + units;
  if (held > 0n) next[asset] = held;
  else delete next[asset];
  op.check(holds);
  if (Object.keys(next).length === 0) op.delete(holds.key);
  else op.set(holds.key, next);
  op.sum(heldTotalKey(projectId, asset), ((units % U64) + U64) % U64);
}

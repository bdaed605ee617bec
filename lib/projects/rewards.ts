/**
 * What the dashboard reads and does of rewards (issue 41): a player's rewards, the project's open
 * ones (held or paying) page by page, an admin's cancel, and what the project holds for players:
 * the held and paying rewards of each asset
 * (`heldTotals`, `kv/rewards.ts`) against what the managed wallet has of it. Held rewards are the
 * project's liabilities: each is paid when its player links, so the wallet must be able to cover
 * them. An asset is short while the wallet holds less than is held, unless it is a mint the wallet
 * may mint itself. SOL's fees come on top and are the low-balance warnings' concern
 * (`low_balance.ts`).
 */
import type { AppContext } from "../context.ts";
import { formatUnits } from "../chain/amounts.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";
import {
  heldTotals,
  listOpenRewards,
  listRewardsOfPlayer,
  type RewardRecord,
} from "../../kv/rewards.ts";
import { memberRule } from "../auth/roles.ts";
import { cancelReward } from "../rewards/moves.ts";
import type { TokenLabel } from "../chain/token_labels.ts";
import type { Project } from "../../kv/projects.ts";
import { mintsAuthorizedTo, readWalletHoldings } from "./low_balance.ts";
import { readTokenLabels } from "./wallet.ts";

/** One asset held for players, worded for the page. */
export interface HeldAsset {
  /** `sol`, or the mint. */
  asset: string;
  /** What is held, in token units; raw base units when the token's decimals could not be read. */
  held: string;
  /** What the wallet holds of it, in the same units; null when the chain was not read in time. */
  balance: string | null;
  /** How much more the wallet needs to cover what is held; null when it does (or is unknown). */
  short: string | null;
  /** The wallet is the mint's authority: it can mint what is held. */
  mintable: boolean;
  /** A token's decimals (null when unread) and symbol; null for SOL. */
  token: { decimals: number | null; symbol: string | null } | null;
}

/** The assets held for players, SOL first; empty when nothing is held. */
export async function readHeldAssets(ctx: AppContext, project: Project): Promise<HeldAsset[]> {
  const totals = await heldTotals(ctx.kv, project.id);
  if (totals.size === 0) return [];
  const mints = [...totals.keys()].filter((asset) => asset !== "sol");
  const [holdings, labels, mintable] = await Promise.all([
    readWalletHoldings(ctx, project, mints),
    readTokenLabels(ctx, project, mints),
    mints.length > 0 ? mintsAuthorizedTo(ctx, project, mints) : new Set<string>(),
  ]);
  const assets = [...totals].map(([asset, held]): HeldAsset => {
    const isSol = asset === "sol";
    const decimals = isSol
      ? SOL_DECIMALS
      : labels.get(asset)?.decimals ?? holdings?.tokens.get(asset)?.decimals ?? null;
    const has = holdings === null
      ? null
      : isSol
      ? holdings.lamports
      : holdings.tokens.get(asset)?.amount ?? 0n;
    const text = (units: bigint) => decimals === null ? `${units}` : formatUnits(units, decimals);
    const canMint = mintable.has(asset);
    return {
      asset,
      held: text(held),
      balance: has === null ? null : text(has),
      short: has !== null && has < held && !canMint ? text(held - has) : null,
      mintable: canMint,
      token: isSol ? null : { decimals, symbol: labels.get(asset)?.symbol ?? null },
    };
  });
  return assets.sort((a, b) => Number(b.asset === "sol") - Number(a.asset === "sol"));
}

/** A player's rewards, newest first, with the labels of their mints. */
export interface PlayerRewardList {
  userId: number;
  rewards: RewardRecord[];
  labels: Map<string, TokenLabel>;
}

/** The rewards of the player `userId` (null for none asked: the page searched something else). */
export async function readPlayerRewards(
  ctx: AppContext,
  project: Project,
  userId: number | null,
): Promise<PlayerRewardList | null> {
  if (userId === null) return null;
  const rewards = await listRewardsOfPlayer(ctx.kv, project.id, userId);
  return { userId, rewards, labels: await labelsOf(ctx, project, rewards) };
}

/** A page of the project's open rewards, newest first, with its mints' labels. */
export interface OpenRewardPage {
  rewards: RewardRecord[];
  labels: Map<string, TokenLabel>;
  /** The next page's cursor; null on the last page. */
  next: string | null;
}

/** Open rewards a page of the dashboard lists. */
const OPEN_REWARDS_PAGE_SIZE = 50;

/** The project's held and paying rewards, newest first, from `cursor` (null: the newest). */
export async function readOpenRewards(
  ctx: AppContext,
  project: Project,
  cursor: string | null,
): Promise<OpenRewardPage> {
  const page = await listOpenRewards(ctx.kv, project.id, {
    limit: OPEN_REWARDS_PAGE_SIZE,
    ...(cursor ? { cursor } : {}),
  });
  const labels = await labelsOf(ctx, project, page.rewards);
  return { rewards: page.rewards, labels, next: page.cursor };
}

/**
 * Cancels a held reward for a member whose role may (`cancel_rewards`), through the game API's
 * cancel (`lib/rewards/moves.ts`): its commit checks the member's entry and records the audit entry.
 */
export async function cancelProjectReward(
  ctx: AppContext,
  input: { developer: string; projectId: string; key: string },
): Promise<RewardRecord> {
  const { developer, projectId, key } = input;
  return await cancelReward(ctx, { projectId, key }, {
    by: {
      member: { address: developer, rule: memberRule("cancel_rewards") },
      audit: (cancelled) => ({
        projectId,
        actor: developer,
        action: "reward_cancelled",
        details: {
          key,
          userId: cancelled.userId,
          amount: cancelled.mint
            ? `${cancelled.amount} of ${cancelled.mint}`
            : `${cancelled.amount} SOL`,
        },
        at: ctx.clock.now(),
      }),
    },
  });
}

/** The labels of the rewards' mints (none read when all are SOL). */
async function labelsOf(
  ctx: AppContext,
  project: Project,
  rewards: RewardRecord[],
): Promise<Map<string, TokenLabel>> {
  const mints = rewards.flatMap((reward) => reward.mint ? [reward.mint] : []);
  return mints.length > 0 ? await readTokenLabels(ctx, project, mints) : new Map();
}

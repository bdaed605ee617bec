/**
 * What the dashboard reads of rewards (issue 41): a player's rewards, and what the project holds
 * for players: the held and paying rewards of each asset
 * (`heldTotals`, `kv/rewards.ts`) against what the managed wallet has of it. Held rewards are the
 * project's liabilities: each is paid when its player links, so the wallet must be able to cover
 * them. An asset is short while the wallet holds less than is held, unless it is a mint the wallet
 * may mint itself. SOL's fees come on top and are the low-balance warnings' concern
 * (`low_balance.ts`).
 */
import type { AppContext } from "../context.ts";
import { formatUnits } from "../chain/amounts.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";
import { heldTotals, listRewardsOfPlayer, type RewardRecord } from "../../kv/rewards.ts";
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
  const mints = rewards.flatMap((reward) => reward.mint ? [reward.mint] : []);
  const labels = mints.length > 0 ? await readTokenLabels(ctx, project, mints) : new Map();
  return { userId, rewards, labels };
}

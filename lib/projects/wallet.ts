/**
 * The project's managed wallet in the dashboard: creating it (at most one per project, ever), and
 * reading what it holds for the pages that move or strand it.
 */
import type { Address } from "@solana/kit";
import type { AppContext } from "../context.ts";
import { withDeadline } from "../../core/deadline.ts";
import type { TokenBalance } from "../chain/token_balances.ts";
import type { TokenLabel } from "../chain/token_labels.ts";
import { ApiError, projectNotFound } from "../../core/api_error.ts";
import { getProject, type Project, updateProject } from "../../kv/projects.ts";

/**
 * Creates the project's managed wallet and records its address on the project, with the audit
 * entry of `actor` when a dashboard member asked; refuses a second.
 */
export async function createProjectWallet(
  ctx: AppContext,
  projectId: string,
  options: { actor?: string } = {},
): Promise<string> {
  if (ctx.wallets.name === "none") {
    throw new ApiError("wallets_unavailable", "Managed wallets are not turned on");
  }
  const project = await getProject(ctx.kv, projectId);
  if (!project || project.deletedAt !== null) {
    throw projectNotFound();
  }
  if (project.walletAddress) throw walletExists();
  // The provider returns the existing key when a previous attempt stored it but stopped before
  // the project was updated, so a crash in between never leaves the project without a wallet.
  const address = await ctx.wallets.createWallet(projectId);
  let refused = false;
  const { actor } = options;
  const now = ctx.clock.now();
  await updateProject(ctx.kv, projectId, (current) => {
    refused = current.walletAddress !== null;
    return refused ? current : { ...current, walletAddress: address };
  }, {
    // A refused change writes nothing new, but its commit still runs: it records nothing.
    audit: actor === undefined
      ? undefined
      : (before) =>
        before.walletAddress === null
          ? { projectId, actor, action: "wallet_created", details: { address }, at: now }
          : null,
  });
  if (refused) throw walletExists();
  ctx.apiKeys.forgetProject(projectId);
  return address;
}

function walletExists(): ApiError {
  return new ApiError("wallet_exists", "The project already has a managed wallet");
}

// A page must not hang on a slow RPC node; the balances are then shown as unreadable.
const BALANCE_WAIT_MS = 4_000;

// Tokens past this many are listed without their symbol: each symbol is one read, cached.
const MAX_LABELLED_TOKENS = 20;

/** A token the wallet holds, with the symbol of its metadata (null without one). */
export type WalletToken = TokenBalance & { symbol: string | null };

/** What the wallet holds, SOL and tokens. */
export interface WalletBalances {
  sol: string;
  tokens: WalletToken[];
}

/** What the wallet holds, SOL and tokens; null without a wallet or when the chain is not read in time. */
export async function readWalletBalances(
  ctx: AppContext,
  project: Project,
): Promise<WalletBalances | null> {
  if (!project.walletAddress) return null;
  const wallet = project.walletAddress as Address;
  const read = Promise.all([
    ctx.chain.getSolBalance(project.cluster, wallet),
    ctx.chain.getTokenBalances(project.cluster, wallet),
  ]).then(async ([sol, tokens]) => ({
    sol: sol.sol,
    tokens: await Promise.all((tokens ?? []).map(async (token, i) => ({
      ...token,
      symbol: i < MAX_LABELLED_TOKENS ? await readTokenSymbol(ctx, project, token.mint) : null,
    }))),
  }), () => null);
  return await withDeadline(read, { ms: BALANCE_WAIT_MS, fallback: null });
}

/** The symbol of `mint`'s metadata (cached); null without one or when it cannot be read. */
export async function readTokenSymbol(
  ctx: AppContext,
  project: Project,
  mint: Address,
): Promise<string | null> {
  const label = await ctx.chain.getTokenLabel(project.cluster, mint).catch(() => null);
  return label?.symbol ?? null;
}

/**
 * The labels (symbol, decimals) of the mints a page lists, read together within the page's wait
 * (cached); a mint whose label is not read in time is left out, and the page shows it shortened.
 */
export async function readTokenLabels(
  ctx: AppContext,
  project: Project,
  mints: Iterable<string>,
): Promise<Map<string, TokenLabel>> {
  const labels = new Map<string, TokenLabel>();
  const read = Promise.all(
    [...new Set(mints)].slice(0, MAX_LABELLED_TOKENS).map(async (mint) => {
      const label = await ctx.chain.getTokenLabel(project.cluster, mint as Address)
        .catch(() => null);
      if (label) labels.set(mint, label);
    }),
  );
  await withDeadline(read, { ms: BALANCE_WAIT_MS, fallback: undefined });
  return new Map(labels);
}

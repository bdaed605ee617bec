/**
 * What a withdrawal will send, worked out before its owner or admin signs the statement naming it:
 * one line (an asset and amount asked for), or everything the managed wallet holds. Everything is
 * every token in the wallet's associated token accounts (tokens elsewhere cannot be sent by the
 * money path, which sends from those), then the SOL left once these are kept back:
 *
 * | Kept back                    | How much, and why                                              |
 * | ---------------------------- | -------------------------------------------------------------- |
 * | Signature fee                | 5,000 lamports per transaction                                 |
 * | Priority fee                 | On mainnet, per transaction, the highest the service ever pays |
 * |                              | for its kind (`priority_fee.ts`)                               |
 * | Token account rent           | For each recipient token account the wallet must create        |
 * | Wallet's rent-exempt minimum | A transaction that leaves an account with less than that but   |
 * |                              | more than nothing is refused, so its last lamports could never |
 * |                              | all be sent                                                    |
 *
 * What the fees did not use stays in the wallet (a few thousandths of a SOL at most).
 */
import { type Address, address } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import type { TxContext } from "./runtime.ts";
import type { Project } from "../../kv/projects.ts";
import { formatUnits, parseUnits } from "../chain/amounts.ts";
import { fetchMint, type MintInfo, TOKEN_PROGRAMS } from "../chain/mints.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";
import { parseAddress } from "../chain/validation.ts";
import { computeUnitLimit, MAX_MICRO_LAMPORTS_PER_CU } from "./build/priority_fee.ts";
import { invalidSettings } from "../issue_text.ts";
import { ApiError } from "../../core/api_error.ts";
import { rpcFailureReason } from "./rpc/chain_errors.ts";

/** One line of a plan: the mint (null for SOL) and the amount in token units. */
export interface PlannedLine {
  mint: string | null;
  amount: string;
}

/** A plan: where to and what, tokens before SOL. */
export interface WithdrawalPlan {
  recipient: Address;
  lines: PlannedLine[];
}

const SIGNATURE_FEE = 5_000n;
// Token-2022 accounts carry extensions: their size is read from the wallet's own account of the
// mint; one of the Token program is always this size.
const TOKEN_ACCOUNT_SIZE = 165n;

/**
 * Checks one line asked for (400 `invalid_settings` naming each bad field): the recipient, the
 * asset (`SOL` or a mint on the project's cluster) and the amount in its decimals.
 */
export async function planWithdrawal(
  ctx: TxContext,
  project: Project,
  input: { recipient: unknown; asset: unknown; amount: unknown },
): Promise<WithdrawalPlan> {
  const problems: string[] = [];
  const recipient = readRecipient(project, input.recipient, problems);
  const asset = typeof input.asset === "string" ? input.asset.trim() : "";
  let decimals = SOL_DECIMALS;
  let mint: MintInfo | null = null;
  if (asset !== "SOL") {
    const mintAddress = parseAddress(asset);
    mint = mintAddress &&
      await readChain(() => fetchMint(ctx.rpc[project.cluster], mintAddress));
    if (!mint) problems.push(`asset: must be SOL or a token mint on ${project.cluster}`);
    else decimals = mint.decimals;
  }
  const amount = typeof input.amount === "string" ? input.amount.trim() : "";
  const raw = parseUnits(amount, decimals);
  if (raw === null || raw === 0n) {
    problems.push(`amount: must be more than zero, with at most ${decimals} decimals`);
  }
  if (problems.length > 0 || !recipient || raw === null) throw invalidSettings(problems);
  // Checked before a signature is asked for: a statement for money the wallet lacks would only
  // be signed to fail on chain.
  const wallet = parseAddress(project.walletAddress ?? undefined);
  const held = wallet ? await readChain(() => heldBy(ctx, project, wallet, mint)) : 0n;
  const fee = mint ? 0n : SIGNATURE_FEE;
  if (raw + fee > held) {
    const unit = mint ? `of the token ${mint.address}` : "SOL";
    throw invalidSettings([
      `amount: Insufficient funds: the wallet holds ${formatUnits(held, decimals)} ${unit}, ` +
      `${amount} ${unit} requested${mint ? "" : ` plus the ${formatUnits(fee, decimals)} SOL fee`}`,
    ]);
  }
  return { recipient, lines: [{ mint: mint?.address ?? null, amount }] };
}

/** What the wallet holds of SOL (`mint` null) or of a token, in its own associated account. */
async function heldBy(
  ctx: TxContext,
  project: Project,
  wallet: Address,
  mint: MintInfo | null,
): Promise<bigint> {
  const rpc = ctx.rpc[project.cluster];
  if (!mint) return (await rpc.getBalance(wallet, { commitment: "confirmed" }).send()).value;
  const [ata] = await findAssociatedTokenPda({
    owner: wallet,
    mint: mint.address,
    tokenProgram: mint.programAddress,
  });
  const { value } = await rpc.getMultipleAccounts([ata], {
    commitment: "confirmed",
    encoding: "jsonParsed",
  }).send();
  const parsed = (value[0]?.data as { parsed?: { info: ParsedTokenInfo } } | undefined)?.parsed;
  return BigInt(parsed?.info.tokenAmount.amount ?? 0);
}

/**
 * Plans the withdrawal of everything the wallet holds (see the header); 400 when it holds
 * nothing, 502 `rpc_error` when the chain cannot be read.
 */
export async function planWithdrawEverything(
  ctx: TxContext,
  project: Project,
  input: { recipient: unknown },
): Promise<WithdrawalPlan> {
  const problems: string[] = [];
  const recipient = readRecipient(project, input.recipient, problems);
  const wallet = parseAddress(project.walletAddress ?? undefined);
  if (!wallet) problems.push("wallet: the project has no managed wallet");
  if (problems.length > 0 || !recipient || !wallet) throw invalidSettings(problems);
  const lines = await readChain(() => everything(ctx, project, { wallet, recipient }));
  if (lines.length === 0) throw invalidSettings(["wallet: holds nothing that can be withdrawn"]);
  return { recipient, lines };
}

async function everything(
  ctx: TxContext,
  project: Project,
  { wallet, recipient }: { wallet: Address; recipient: Address },
): Promise<PlannedLine[]> {
  const rpc = ctx.rpc[project.cluster];
  const perTx = (kind: "transfer-sol" | "transfer-token") =>
    SIGNATURE_FEE +
    (project.cluster === "mainnet"
      ? (BigInt(computeUnitLimit(kind)) * MAX_MICRO_LAMPORTS_PER_CU + 999_999n) / 1_000_000n
      : 0n);

  const tokens = await walletTokens(ctx, project, wallet);
  const destinations = await Promise.all(
    tokens.map(async (t) =>
      (await findAssociatedTokenPda({ owner: recipient, mint: t.mint, tokenProgram: t.program }))[0]
    ),
  );
  const existing = destinations.length === 0
    ? []
    : (await rpc.getMultipleAccounts(destinations, { commitment: "confirmed" }).send()).value;
  let kept: bigint = await rpc.getMinimumBalanceForRentExemption(0n).send();
  for (const [i, token] of tokens.entries()) {
    kept += perTx("transfer-token");
    if (!existing[i]) kept += await rpc.getMinimumBalanceForRentExemption(token.space).send();
  }
  const lines: PlannedLine[] = tokens.map((t) => ({
    mint: t.mint,
    amount: formatUnits(t.amount, t.decimals),
  }));
  const { value: balance } = await rpc.getBalance(wallet, { commitment: "confirmed" }).send();
  const sol = balance - kept - perTx("transfer-sol");
  if (sol > 0n) lines.push({ mint: null, amount: formatUnits(sol, SOL_DECIMALS) });
  return lines;
}

/** Runs chain reads; a failure is 502 `rpc_error` (nothing was asked of anyone yet). */
async function readChain<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    throw new ApiError("rpc_error", `Could not read the chain: ${rpcFailureReason(error)}`);
  }
}

/** The wallet's non-empty associated token accounts: their mint, program, amount and size. */
async function walletTokens(ctx: TxContext, project: Project, wallet: Address) {
  const rpc = ctx.rpc[project.cluster];
  const found = [];
  for (const programId of TOKEN_PROGRAMS) {
    const { value } = await rpc.getTokenAccountsByOwner(wallet, { programId }, {
      commitment: "confirmed",
      encoding: "jsonParsed",
    }).send();
    for (const { pubkey, account } of value) {
      const { info } = (account.data as { parsed: { info: ParsedTokenInfo } }).parsed;
      const mint = address(info.mint);
      const amount = BigInt(info.tokenAmount.amount);
      const [ata] = await findAssociatedTokenPda({ owner: wallet, mint, tokenProgram: programId });
      if (pubkey !== ata || amount === 0n) continue;
      const space = programId === TOKEN_PROGRAMS[0] ? TOKEN_ACCOUNT_SIZE : BigInt(account.space);
      found.push({ mint, program: programId, amount, decimals: info.tokenAmount.decimals, space });
    }
  }
  return found;
}

interface ParsedTokenInfo {
  mint: string;
  tokenAmount: { amount: string; decimals: number };
}

function readRecipient(project: Project, value: unknown, problems: string[]): Address | null {
  const recipient = parseAddress(typeof value === "string" ? value.trim() : undefined);
  if (!recipient) problems.push("recipient: must be a Solana wallet address");
  else if (recipient === project.walletAddress) {
    problems.push("recipient: is the managed wallet itself");
  } else return recipient;
  return null;
}

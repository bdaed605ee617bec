/**
 * The transaction policy (spec "Transaction policy"): per-transaction maxima, hourly counts per
 * recipient wallet and per player, and hourly amount budgets per asset; and, for rewards (an
 * extension), caps on what one player may have held unpaid, per asset. Amounts stay decimal
 * strings exactly as the developer typed them; whether an asset's decimals can represent them is
 * only known per mint, so that is checked when a request uses them (`invalid_limit_config`).
 */
import { z } from "zod";
import { ApiError } from "../../../core/api_error.ts";
import { DECIMAL_PATTERN, parseUnits } from "../../chain/amounts.ts";
import { parseAddress } from "../../chain/validation.ts";
import {
  emptyPolicy,
  getPolicyEntry,
  type MintAllowance,
  replacePolicy,
  type TxPolicy,
} from "../../../kv/policy.ts";
import { issueLines } from "../../issue_text.ts";
import { commitWithRetry, RETRY } from "../../../core/commit_retry.ts";
import type { AuditInput } from "../../../kv/audit_log.ts";

/** The asset name SOL has in budgets; tokens use their mint address. */
export const SOL_ASSET = "SOL";

/** Most allowed mints and budgets one policy may list. */
const MAX_POLICY_ENTRIES = 50;
/** Largest hourly count limit accepted. */
const MAX_HOURLY_COUNT = 1_000_000;

const blankToNull = (value: unknown) =>
  value === undefined || (typeof value === "string" && value.trim() === "") ? null : value;

const amount = z.string().trim().superRefine((text, ctx) => {
  const problem = text.length > 40
    ? "must be at most 40 characters"
    : !DECIMAL_PATTERN.test(text)
    ? "must be a decimal amount such as 1.5"
    : !/[1-9]/.test(text)
    ? "must be greater than zero"
    : null;
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const hourlyCount = z.preprocess(
  (value) => typeof value === "string" && /^\s*[0-9]+\s*$/.test(value) ? Number(value) : value,
  z.number({ error: "must be a whole number" }).int("must be a whole number")
    .min(1, "must be at least 1").max(MAX_HOURLY_COUNT, `must be at most ${MAX_HOURLY_COUNT}`),
);

const mintAddress = z.string().trim().refine((text) => parseAddress(text) !== null, {
  message: "must be a mint address",
});

const policyInput = z.object({
  maxSolPerTransfer: z.preprocess(blankToNull, amount.nullable()),
  allowedMints: z.array(z.object({
    mint: mintAddress,
    maxPerTransaction: amount,
    maxHeldPerPlayer: z.preprocess(blankToNull, amount.nullable()),
  }))
    .max(MAX_POLICY_ENTRIES, `must list at most ${MAX_POLICY_ENTRIES} mints`).default([]),
  perRecipientPerHour: z.preprocess(blankToNull, hourlyCount.nullable()),
  perPlayerPerHour: z.preprocess(blankToNull, hourlyCount.nullable()),
  hourlyBudgets: z.array(z.object({
    asset: z.string().trim().refine(
      (text) => text === SOL_ASSET || parseAddress(text) !== null,
      { message: `must be ${SOL_ASSET} or a mint address` },
    ),
    amount,
  })).max(MAX_POLICY_ENTRIES, `must list at most ${MAX_POLICY_ENTRIES} budgets`).default([]),
  maxHeldSolPerPlayer: z.preprocess(blankToNull, amount.nullable()),
});

/**
 * Validates a policy sent by the dashboard and returns it normalised (trimmed strings, blank
 * fields unset); throws 400 `invalid_settings` naming each bad field.
 */
export function validatePolicy(input: unknown): TxPolicy {
  const result = policyInput.safeParse(input);
  const problems = result.success
    ? []
    : issueLines(result.error.issues, { whole: "policy", positions: "bracketed" });
  problems.push(...duplicates(input, "allowedMints", "mint"));
  problems.push(...duplicates(input, "hourlyBudgets", "asset"));
  if (!result.success || problems.length) {
    throw new ApiError("invalid_settings", problems.join("; "));
  }
  const p = result.data;
  return {
    maxSolPerTransfer: p.maxSolPerTransfer,
    // An unset cap is left out, as policies saved before rewards have it.
    allowedMints: p.allowedMints.map(({ maxHeldPerPlayer, ...mint }) =>
      maxHeldPerPlayer === null ? mint : { ...mint, maxHeldPerPlayer }
    ),
    perRecipientPerHour: p.perRecipientPerHour,
    perPlayerPerHour: p.perPlayerPerHour,
    hourlyBudgets: p.hourlyBudgets,
    ...(p.maxHeldSolPerPlayer === null ? {} : { maxHeldSolPerPlayer: p.maxHeldSolPerPlayer }),
  };
}

// Checked on the raw input, so a duplicate is reported together with every other problem.
function duplicates(input: unknown, list: string, field: string): string[] {
  const entries = (input as Record<string, unknown> | null)?.[list];
  if (!Array.isArray(entries)) return [];
  const seen = new Set<string>();
  const problems: string[] = [];
  entries.forEach((entry, i) => {
    const value = (entry as Record<string, unknown> | null)?.[field];
    if (typeof value !== "string") return;
    const key = value.trim();
    if (seen.has(key)) problems.push(`${list}[${i}].${field}: is listed twice`);
    seen.add(key);
  });
  return problems;
}

/** The allowance of `mint`, or null when the mint is not allowed. */
export function findMintAllowance(policy: TxPolicy, mint: string): MintAllowance | null {
  return policy.allowedMints.find((entry) => entry.mint === mint) ?? null;
}

/** The hourly budget of an asset (`SOL` or a mint), or null when it has none. */
export function findAssetBudget(policy: TxPolicy, asset: string): string | null {
  return policy.hourlyBudgets.find((entry) => entry.asset === asset)?.amount ?? null;
}

/**
 * Validates (400 `invalid_settings`) and stores the project's policy; returns what was stored.
 * The replaced policy is read and checked by the commit: `guard` may refuse the change from it
 * (by throwing), and `audit` builds the entry recorded with the change from both.
 */
export async function savePolicy(
  kv: Deno.Kv,
  projectId: string,
  input: unknown,
  options: {
    guard?: (before: TxPolicy, after: TxPolicy) => void;
    audit?: (before: TxPolicy, after: TxPolicy) => AuditInput;
  } = {},
): Promise<TxPolicy> {
  const policy = validatePolicy(input);
  return await commitWithRetry("save the policy", async (round) => {
    const entry = await getPolicyEntry(kv, projectId);
    const before = entry.value ?? emptyPolicy();
    // Stored already (this call's commit applied though its answer was lost, or another's did).
    if (round > 0 && entry.value && samePolicy(entry.value, policy)) return policy;
    options.guard?.(before, policy);
    const audit = options.audit?.(before, policy);
    if (await replacePolicy(kv, entry, policy, { audit })) return policy;
    return RETRY;
  }, { rounds: 10 });
}

function samePolicy(a: TxPolicy, b: TxPolicy): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The limits `after` loosens compared to `before`, named for a message: a maximum, count or budget
 * raised or removed, SOL transfers turned on, a mint allowed. Empty when it loosens none.
 */
export function policyLoosenings(before: TxPolicy, after: TxPolicy): string[] {
  const found: string[] = [];
  const [wasSol, nowSol] = [before.maxSolPerTransfer, after.maxSolPerTransfer];
  if (nowSol !== null && (wasSol === null || compareDecimals(nowSol, wasSol) > 0)) {
    found.push("maxSolPerTransfer");
  }
  for (const mint of after.allowedMints) {
    const was = findMintAllowance(before, mint.mint);
    if (!was || compareDecimals(mint.maxPerTransaction, was.maxPerTransaction) > 0) {
      found.push(`allowedMints ${mint.mint}`);
    }
  }
  const [wasHeld, nowHeld] = [
    before.maxHeldSolPerPlayer ?? null,
    after.maxHeldSolPerPlayer ?? null,
  ];
  if (wasHeld !== null && (nowHeld === null || compareDecimals(nowHeld, wasHeld) > 0)) {
    found.push("maxHeldSolPerPlayer");
  }
  for (const mint of before.allowedMints) {
    const was = mint.maxHeldPerPlayer ?? null;
    const now = findMintAllowance(after, mint.mint)?.maxHeldPerPlayer ?? null;
    if (was !== null && (now === null || compareDecimals(now, was) > 0)) {
      found.push(`allowedMints ${mint.mint} maxHeldPerPlayer`);
    }
  }
  for (const field of ["perRecipientPerHour", "perPlayerPerHour"] as const) {
    const [was, now] = [before[field], after[field]];
    if (was !== null && (now === null || now > was)) found.push(field);
  }
  for (const budget of before.hourlyBudgets) {
    const now = findAssetBudget(after, budget.asset);
    if (now === null || compareDecimals(now, budget.amount) > 0) {
      found.push(`hourlyBudgets ${budget.asset}`);
    }
  }
  return found;
}

/** Compares two validated decimal amounts exactly: negative, zero or positive as `a` is below, equal or above `b`. */
function compareDecimals(a: string, b: string): number {
  const scale = Math.max(a.split(".")[1]?.length ?? 0, b.split(".")[1]?.length ?? 0);
  const [x, y] = [parseUnits(a, scale)!, parseUnits(b, scale)!];
  return x < y ? -1 : x > y ? 1 : 0;
}

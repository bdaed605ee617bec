/**
 * The owner's export of the managed wallet's secret key, in two steps as a withdrawal: a statement
 * naming the project and the wallet for the owner's wallet to sign (`lib/auth/statements.ts`),
 * then the signed confirmation, which answers the key once, in the formats Solana's CLI imports
 * (`solana-keygen`'s JSON array of the 64 bytes) and wallets import (base58 of the same 64 bytes).
 *
 * The key is decrypted for that answer only: never stored in clear, logged, put in the audit entry
 * or a flash cookie. The export is recorded (who, when: `kv/key_exports.ts`) with its audit entry
 * in the commit that spends the statement, and the project then shows that its key was exported.
 * At most `MAX_KEY_EXPORTS_PER_DAY` per project in a rolling 24 hours, and none when the
 * deployment turns exports off (`KEY_EXPORT=off`, `lib/config.ts`).
 */
import { base58 } from "@scure/base";
import type { AppContext } from "../context.ts";
import { ApiError } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import {
  addKeyExport,
  exportsToday,
  getKeyExports,
  KEY_EXPORT_WINDOW_MS,
} from "../../kv/key_exports.ts";
import { commitWithRetry, RETRY } from "../../core/commit_retry.ts";
import { getStatement, type PendingStatement } from "../../kv/statements.ts";
import { issueStatement, spendStatement } from "../auth/statements.ts";
import { WalletUnavailableError } from "../wallets/provider.ts";
import type { ProjectAccess } from "./access.ts";

/**
 * Exports per project per rolling 24 hours: one is what moving the wallet takes, the others cover
 * a copy lost or mistyped; more would only serve someone using a stolen session and wallet to
 * spread the key, and every export leaves a copy of the key that can never be called back.
 */
export const MAX_KEY_EXPORTS_PER_DAY = 3;

/** What the confirmation answers, once. */
export interface ExportedKey {
  walletAddress: string;
  /** The 64 bytes as `solana-keygen` writes them: a JSON array of numbers. */
  solanaCli: number[];
  /** The same 64 bytes in base58, as Phantom, Solflare and Backpack import a private key. */
  base58: string;
  exportedAt: number;
}

/** Checks exports are on, the wallet exists and the day's limit is not reached; issues the statement. */
export async function prepareKeyExport(
  ctx: AppContext,
  access: ProjectAccess,
): Promise<PendingStatement> {
  const { project, developer } = access;
  const walletAddress = exportableWallet(ctx, project.walletAddress);
  const { value } = await getKeyExports(ctx.kv, project.id);
  checkLimit(exportsToday(value, ctx.clock.now()));
  return await issueStatement(ctx, {
    purpose: "key_export",
    project,
    developer,
    statement: `Export the secret key of the managed wallet ${walletAddress} of ${project.name} ` +
      `(project ${project.id}, ${project.cluster}). Whoever holds it controls every asset of ` +
      `the wallet. Signing authorizes one export.`,
    payload: { walletAddress },
  });
}

/** Spends the signed statement and answers the key (see the header). */
export async function confirmKeyExport(
  ctx: AppContext,
  access: ProjectAccess,
  input: { nonce: string; signature: string },
): Promise<ExportedKey> {
  const { project, developer } = access;
  const walletAddress = exportableWallet(ctx, project.walletAddress);
  // Decrypted before the statement is spent: a key that cannot be opened records no export.
  let secretKey: Uint8Array;
  try {
    secretKey = await ctx.wallets.exportSecretKey(project.id);
  } catch (error) {
    if (!(error instanceof WalletUnavailableError)) throw error;
    throw new ApiError("wallet_unavailable", error.message);
  }
  try {
    const at = await recordExport(ctx, access, input);
    log("info", "Wallet key exported", { projectId: project.id, developer, walletAddress });
    return {
      walletAddress,
      solanaCli: Array.from(secretKey),
      base58: base58.encode(secretKey),
      exportedAt: at,
    };
  } finally {
    secretKey.fill(0);
  }
}

/**
 * Spends the statement in one commit with the export's record and audit entry, checked on the
 * record as read: an export by another statement at the same moment makes it read again (the
 * statement is not spent by a commit that failed), so the limit holds under concurrency.
 */
async function recordExport(
  ctx: AppContext,
  access: ProjectAccess,
  input: { nonce: string; signature: string },
): Promise<number> {
  const { project, developer } = access;
  const ref = { ...input, purpose: "key_export" as const, projectId: project.id, developer };
  return await commitWithRetry("record the key export", async () => {
    const at = ctx.clock.now();
    const entry = await getKeyExports(ctx.kv, project.id);
    checkLimit(exportsToday(entry.value, at));
    try {
      await spendStatement(ctx, ref, (op) =>
        addKeyExport(op, entry, {
          by: developer,
          at,
          audit: {
            projectId: project.id,
            actor: developer,
            action: "key_exported",
            details: { walletAddress: project.walletAddress },
            at,
          },
        }));
      return at;
    } catch (error) {
      const lostRace = error instanceof ApiError && error.code === "challenge_expired" &&
        (await getStatement(ctx.kv, input.nonce)) !== null;
      if (lostRace) return RETRY;
      throw error;
    }
  });
}

function exportableWallet(ctx: AppContext, walletAddress: string | null): string {
  if (!ctx.config.keyExport) {
    throw new ApiError(
      "key_export_disabled",
      "Key export is turned off on this deployment (KEY_EXPORT=off)",
    );
  }
  if (!walletAddress) {
    throw new ApiError("wallet_not_configured", "The project has no managed wallet");
  }
  return walletAddress;
}

function checkLimit(today: number): void {
  if (today >= MAX_KEY_EXPORTS_PER_DAY) {
    throw new ApiError(
      "key_export_limit_reached",
      `The wallet's key was exported ${MAX_KEY_EXPORTS_PER_DAY} times in the last ` +
        `${KEY_EXPORT_WINDOW_MS / 3_600_000} hours: try again later`,
    );
  }
}

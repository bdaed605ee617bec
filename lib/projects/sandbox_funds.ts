/**
 * Sandbox SOL for a project's managed wallet: on a service running on this machine (`deno task
 * dev`, `isLocalOrigin`), a member who may manage the wallet asks the project's cluster RPC for an
 * airdrop, so a project a newcomer creates can pay without a faucet. Anywhere else the request is
 * 403 `sandbox_only`, whatever the page shows. Each airdrop counts toward the developer's
 * `sandbox_airdrop` abuse limit. The answer waits until the airdrop is confirmed (the commitment
 * the balance reads use) and forgets the cached balance, so the page it returns to shows the SOL.
 */
import { type Address, lamports, type Signature } from "@solana/kit";
import { ApiError } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import { formatUnits } from "../chain/amounts.ts";
import { SOL_DECIMALS } from "../chain/sol_balance.ts";
import { fetchSignatureStatus } from "../chain/signature_status.ts";
import { isLocalOrigin } from "../config.ts";
import type { AppContext } from "../context.ts";
import type { Project } from "../../kv/projects.ts";

/** One airdrop: 2 SOL, the most the public devnet RPC gives in one request. */
export const SANDBOX_AIRDROP_LAMPORTS = 2_000_000_000n;
// The answer asks every 200 ms, for up to 30 s, whether the airdrop is confirmed (counted in
// rounds, not on the service's clock, which tests hold still).
const CONFIRM_POLL_MS = 200;
const CONFIRM_ROUNDS = 150;

/** True when this service runs on this machine: it offers sandbox SOL and stand-in credentials. */
export function isSandboxService(ctx: AppContext): boolean {
  return isLocalOrigin(ctx.config.baseUrl);
}

/** Throws 403 `sandbox_only` unless the service runs on this machine; `what` names the aid. */
export function requireSandbox(ctx: AppContext, what: string): void {
  if (isSandboxService(ctx)) return;
  throw new ApiError(
    "sandbox_only",
    `${what} is only offered by a service running on this machine (deno task dev)`,
  );
}

/** Airdrops sandbox SOL to the project's managed wallet; answers the SOL it received. */
export async function fundFromSandbox(
  ctx: AppContext,
  input: { project: Project; developer: string },
): Promise<{ sol: string; signature: Signature }> {
  const { project, developer } = input;
  requireSandbox(ctx, "Sandbox SOL");
  if (!project.walletAddress) {
    throw new ApiError("wallet_not_configured", "The project has no managed wallet");
  }
  await ctx.abuse.take("sandbox_airdrop", developer);
  const wallet = project.walletAddress as Address;
  const rpc = ctx.rpc[project.cluster];
  let signature: Signature;
  try {
    signature = await rpc.requestAirdrop(wallet, lamports(SANDBOX_AIRDROP_LAMPORTS)).send();
  } catch {
    throw new ApiError("airdrop_failed", "The cluster refused the airdrop; try again later");
  }
  await waitUntilConfirmed(ctx, project, signature);
  ctx.chain.forgetSolBalance(project.cluster, wallet);
  const sol = formatUnits(SANDBOX_AIRDROP_LAMPORTS, SOL_DECIMALS);
  log("info", "Sandbox SOL airdropped", { projectId: project.id, sol, signature });
  return { sol, signature };
}

async function waitUntilConfirmed(
  ctx: AppContext,
  project: Project,
  signature: Signature,
): Promise<void> {
  for (let round = 0; round < CONFIRM_ROUNDS; round++) {
    const status = await fetchSignatureStatus(ctx.rpc[project.cluster], signature);
    if (status.status === "confirmed" || status.status === "finalized") return;
    if (status.status === "failed") break;
    await new Promise((resolve) => setTimeout(resolve, CONFIRM_POLL_MS));
  }
  throw new ApiError("airdrop_failed", "The airdrop was not confirmed; try again later");
}

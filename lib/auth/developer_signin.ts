/**
 * Developer sign-in with a wallet (spec "Developer sign-in"): the dashboard account is the wallet
 * address that signs a SIWS message. Nothing is stored while a sign-in is pending: the pending
 * sign-in travels in a signed cookie (`http/cookies.ts`), so issuing one writes nothing. A copy of
 * that cookie must still not work twice, so verifying first spends its message hash in the store
 * (`kv/used_signins.ts`), where exactly one verify of a message wins.
 */
import { z } from "zod";
import type { Clock } from "../../core/clock.ts";
import type { Config } from "../config.ts";
import type { AbuseLimiter } from "../quota/abuse_limits.ts";
import { ApiError } from "../../core/api_error.ts";
import { sha256Hex } from "../../core/hash.ts";
import { getDeveloper, recordDeveloperSignIn } from "../../kv/developers.ts";
import { spendSignIn } from "../../kv/used_signins.ts";
import { dashboardNextPath } from "./next_path.ts";
import { assertSignedBy, createSiwsMessage, createSiwsNonce, decodeAddress } from "./siws.ts";

/** What a sign-in takes of the app context. */
interface SignInContext {
  kv: Deno.Kv;
  clock: Clock;
  config: Config;
  abuse: AbuseLimiter;
}

/** How long a pending sign-in can be answered. */
export const SIGNIN_TTL_MS = 10 * 60_000;

// The Chain ID line of the message: the account is the same on every cluster.
const DASHBOARD_CHAIN_ID = "mainnet";

const pendingSchema = z.object({ address: z.string(), message: z.string(), next: z.string() });

/** A pending sign-in: the message to sign, for whom, and where to land afterwards. */
type PendingSignIn = z.infer<typeof pendingSchema>;

/** Starts a sign-in for `address`; throws 400 `invalid_address` when it is not a wallet address. */
export function createDeveloperChallenge(
  ctx: SignInContext,
  request: { address: string; next?: string | null | undefined },
): PendingSignIn {
  if (!decodeAddress(request.address)) {
    throw new ApiError("invalid_address", "address is not a Solana address");
  }
  const now = ctx.clock.now();
  const message = createSiwsMessage({
    host: new URL(ctx.config.baseUrl).host,
    address: request.address,
    statement:
      `Sign in to the ${ctx.config.serviceName} dashboard. Signing is free and does not send a transaction.`,
    uri: `${ctx.config.baseUrl}/dashboard`,
    chainId: DASHBOARD_CHAIN_ID,
    nonce: createSiwsNonce(),
    issuedAt: now,
    expiresAt: now + SIGNIN_TTL_MS,
  });
  return { address: request.address, message, next: dashboardNextPath(request.next) };
}

/**
 * Spends a pending sign-in as read from its cookie, before anything else is checked, so one
 * pending sign-in serves one attempt; throws 400 `challenge_expired` when it is missing, expired
 * or used.
 */
export async function spendPendingSignIn(ctx: SignInContext, raw: unknown): Promise<PendingSignIn> {
  const pending = pendingSchema.safeParse(raw);
  const spent = pending.success &&
    await spendSignIn(ctx.kv, sha256Hex(pending.data.message), {
      now: ctx.clock.now(),
      ttlMs: SIGNIN_TTL_MS,
    });
  if (!spent) {
    throw new ApiError("challenge_expired", "The sign-in request is missing, expired or used");
  }
  return pending.data!;
}

/**
 * Checks `signature` over the pending message and records the developer's sign-in; a new account
 * is first counted against `client`'s abuse limit. Answers who signed in and where to land.
 */
export async function completeDeveloperSignIn(
  ctx: SignInContext,
  pending: PendingSignIn,
  proof: { signature: string; client: string },
): Promise<{ address: string; next: string; created: boolean }> {
  const { address, message, next } = pending;
  assertSignedBy(message, proof.signature, address);
  if (!(await getDeveloper(ctx.kv, address))) {
    await ctx.abuse.take("developer_account", proof.client);
  }
  const { created } = await recordDeveloperSignIn(ctx.kv, address, ctx.clock.now());
  return { address, next: dashboardNextPath(next), created };
}

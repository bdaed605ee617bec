/** The player linking challenge: a SIWS message tied to the project, the player and one wallet. */
import { consumeLinkNonce, createLinkNonce } from "../../kv/nonces.ts";
import type { Project } from "../../kv/projects.ts";
import type { Player } from "../../kv/sessions.ts";
import { assertSignedBy, createSiwsMessage, createSiwsNonce, decodeAddress } from "../auth/siws.ts";
import type { BaseContext } from "../base_context.ts";
import { ApiError } from "../../core/api_error.ts";
import { linkUrl } from "./page_url.ts";

/** How long a challenge can be answered. */
const CHALLENGE_TTL_MS = 10 * 60_000;

/** The game platform's name in the message. */
const PLATFORM_NAME = "Roblox";

/** The linking message's statement line. */
function linkStatement(project: Project, player: Player): string {
  return `Link this wallet to ${PLATFORM_NAME} account @${player.name} (${player.id}) in ${project.name}. Signing is free and does not send a transaction.`;
}

/**
 * Issues a single-use challenge for `address`, counted against `client`'s abuse limit; throws 400
 * `invalid_address` when it is not a wallet address.
 */
export async function issueLinkChallenge(
  ctx: BaseContext,
  request: { project: Project; player: Player; address: string; client: string },
): Promise<{ nonce: string; message: string }> {
  const { project, player, address } = request;
  if (!decodeAddress(address)) {
    throw new ApiError("invalid_address", "address is not a Solana address");
  }
  // Only a challenge that will be issued (and stored) is counted.
  await ctx.abuse.take("signin_challenge", request.client);
  const now = ctx.clock.now();
  const nonce = createSiwsNonce();
  const expiresAt = now + CHALLENGE_TTL_MS;
  const message = createSiwsMessage({
    host: new URL(ctx.config.baseUrl).host,
    address,
    statement: linkStatement(project, player),
    uri: linkUrl(ctx.config.baseUrl, project.slug),
    chainId: project.cluster,
    nonce,
    issuedAt: now,
    expiresAt,
  });
  await createLinkNonce(ctx.kv, {
    nonce,
    projectId: project.id,
    userId: player.id,
    address,
    message,
    expiresAt,
  }, now);
  return { nonce, message };
}

/**
 * Consumes the nonce (even when the rest fails), then checks it belongs to this project and
 * player and is unexpired, then checks the signature; returns the wallet address proven.
 */
export async function verifyLinkChallenge(
  ctx: BaseContext,
  request: { project: Project; player: Player; nonce: string; signature: string },
): Promise<string> {
  const record = await consumeLinkNonce(ctx.kv, request.nonce);
  if (
    !record || record.projectId !== request.project.id || record.userId !== request.player.id ||
    record.expiresAt <= ctx.clock.now()
  ) {
    throw new ApiError("challenge_expired", "The challenge is unknown, used or expired");
  }
  assertSignedBy(record.message, request.signature, record.address);
  return record.address;
}

/** Linking and unlinking a player's wallet, with the events the wallet link state table requires. */
import { type LinkByUser, linkWallet, unlinkWallet } from "../../kv/links.ts";
import type { AppContext } from "../context.ts";
import { publishEvent } from "../events/publish.ts";
import { log } from "../log.ts";

/**
 * Links the proven wallet to the player through the store's atomic link; publishes
 * `wallet_unlinked` for a previous owner of the wallet, then `wallet_linked` for the player
 * (also for the same wallet again; never `wallet_unlinked` for the player's own replaced wallet).
 */
export async function linkPlayerWallet(
  ctx: AppContext,
  projectId: string,
  link: { userId: number; address: string },
): Promise<LinkByUser> {
  const outcome = await linkWallet(ctx.kv, projectId, { ...link, now: ctx.clock.now() });
  log("info", "Wallet linked", {
    projectId,
    userId: link.userId,
    address: link.address,
    previousOwner: outcome.previousOwner,
    replacedAddress: outcome.replacedAddress,
  });
  if (outcome.previousOwner !== null) {
    await publishEvent(ctx, projectId, {
      type: "wallet_unlinked",
      userId: outcome.previousOwner,
      address: link.address,
    });
  }
  await publishEvent(ctx, projectId, { type: "wallet_linked", ...link });
  return outcome.link;
}

/** Removes the player's link; publishes `wallet_unlinked` only when there was one. */
export async function unlinkPlayerWallet(
  ctx: AppContext,
  projectId: string,
  userId: number,
): Promise<string | null> {
  const address = await unlinkWallet(ctx.kv, projectId, userId);
  if (address !== null) {
    log("info", "Wallet unlinked", { projectId, userId, address });
    await publishEvent(ctx, projectId, { type: "wallet_unlinked", userId, address });
  }
  return address;
}

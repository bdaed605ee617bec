/** Linking and unlinking a player's wallet, with the events the wallet link state table requires. */
import { type LinkByUser, linkWallet, unlinkWallet } from "../../kv/links.ts";
import type { EventContext } from "../events/runtime.ts";
import { commitWithEvents } from "../events/record.ts";
import type { ServiceEvent } from "../../core/events.ts";
import { log } from "../../core/log.ts";
import { getRewardHoldsEntry } from "../../kv/rewards.ts";
import { addLinkJob } from "./job_payloads.ts";

/**
 * Links the proven wallet to the player through the store's atomic link; records
 * `wallet_unlinked` for a previous owner of the wallet, then `wallet_linked` for the player
 * (also for the same wallet again; never `wallet_unlinked` for the player's own replaced wallet).
 * The events and their delivery jobs are written in the link's own commit, so no crash can lose them.
 * When the player holds rewards, that commit also adds the job that pays those waiting for a
 * wallet (`rewards_on_link`); it is checked on the player's holds, which every grant also checks
 * with the link, so a grant racing the link is either seen by it or sees it.
 */
export async function linkPlayerWallet(
  ctx: EventContext,
  projectId: string,
  link: { userId: number; address: string },
): Promise<LinkByUser> {
  let eventIds: string[] = [];
  let paysRewards = false;
  const outcome = await linkWallet(ctx.kv, projectId, { ...link, now: ctx.clock.now() }, {
    commit: async (op, change) => {
      const holds = await getRewardHoldsEntry(ctx.kv, projectId, link.userId);
      op.check(holds);
      paysRewards = holds.value !== null;
      if (paysRewards) {
        const payload = { type: "rewards_on_link" as const, projectId, userId: link.userId };
        addLinkJob(op, payload, { runAt: ctx.clock.now() });
      }
      const events: ServiceEvent[] = [];
      if (change.previousOwner !== null) {
        events.push({
          type: "wallet_unlinked",
          userId: change.previousOwner,
          address: link.address,
        });
      }
      events.push({ type: "wallet_linked", ...link });
      const committed = await commitWithEvents(ctx, op, { projectId, events });
      eventIds = committed.events.map((e) => e.id);
      return committed.ok;
    },
  });
  if (paysRewards) ctx.jobWaker.wake();
  log("info", "Wallet linked", {
    projectId,
    userId: link.userId,
    address: link.address,
    previousOwner: outcome.previousOwner,
    replacedAddress: outcome.replacedAddress,
    eventIds,
  });
  return outcome.link;
}

/** Removes the player's link; records `wallet_unlinked` (in the same commit) only when there was one. */
export async function unlinkPlayerWallet(
  ctx: EventContext,
  projectId: string,
  userId: number,
): Promise<string | null> {
  let eventId: string | undefined;
  const address = await unlinkWallet(ctx.kv, projectId, userId, {
    commit: async (op, address) => {
      const events: ServiceEvent[] = [{ type: "wallet_unlinked", userId, address }];
      const committed = await commitWithEvents(ctx, op, { projectId, events });
      eventId = committed.events[0]?.id;
      return committed.ok;
    },
  });
  if (address !== null) log("info", "Wallet unlinked", { projectId, userId, address, eventId });
  return address;
}

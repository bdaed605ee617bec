/**
 * Rewards under test, on a transaction harness (`tx_harness.ts`): the `/v1/rewards` routes called
 * with the project's key on any instance, players linked through the linking page's own function
 * (`linkPlayerWallet`, which adds the link's reward job), and the reward events the messaging
 * stand-in received.
 */
import { type Address, generateKeyPairSigner } from "@solana/kit";
import { linkPlayerWallet, unlinkPlayerWallet } from "../../lib/link/linking.ts";
import { call } from "./test_app.ts";
import { okJson, type TxHarness, type TxInstance } from "./tx_harness.ts";

/** The reward routes as one instance serves them. */
export function rewardsOf(h: TxHarness, instance: TxInstance = h.a) {
  const apiKey = h.apiKey;
  const app = instance.app;
  return {
    grant: (body: Record<string, unknown>) =>
      call(app, "/v1/rewards", { method: "POST", apiKey, json: body }),
    get: (key: string) => call(app, `/v1/rewards/${encodeURIComponent(key)}`, { apiKey }),
    cancel: (key: string) =>
      call(app, `/v1/rewards/${encodeURIComponent(key)}/cancel`, { method: "POST", apiKey }),
    list: (userId: number) => call(app, `/v1/players/${userId}/rewards`, { apiKey }),
    /** The reward's answer (a 200 is required). */
    read: async (key: string) =>
      await okJson(await call(app, `/v1/rewards/${encodeURIComponent(key)}`, { apiKey })),
  };
}

/** A SOL reward's body: `amount` SOL to `userId` under `key`. */
export function solReward(userId: number, key: string, amount = "0.5") {
  return { userId, kind: "transfer-sol", amount, idempotencyKey: key };
}

/** Links a (new, unless given) wallet to the player as the linking page does; returns it. */
export async function linkPlayer(
  h: TxHarness,
  userId: number,
  options: { address?: Address; instance?: TxInstance } = {},
): Promise<Address> {
  const address = options.address ?? (await generateKeyPairSigner()).address;
  const instance = options.instance ?? h.a;
  await linkPlayerWallet(instance.ctx, h.project.id, { userId, address });
  return address;
}

/** Unlinks the player's wallet as the linking page does. */
export async function unlinkPlayer(h: TxHarness, userId: number): Promise<void> {
  await unlinkPlayerWallet(h.a.ctx, h.project.id, userId);
}

/**
 * Runs due jobs until none are left, then returns the reward events the stand-in received, in
 * the feed's order (their ids): deliveries run side by side, so messages may come in another.
 */
export async function rewardEvents(h: TxHarness): Promise<Array<Record<string, unknown>>> {
  await h.txEvents();
  return h.standIn.inbox()
    .map((m) => m.data as Record<string, unknown>)
    .filter((data) => typeof data?.type === "string" && data.type.startsWith("reward_"))
    .sort((a, b) => Number(a.id) - Number(b.id));
}

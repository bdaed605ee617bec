/** The events pushed to game servers (spec "Events"); `v` is added when a message is encoded. */

/** The kinds of the transaction routes, each its own route (`/v1/tx/<kind>`). */
export const TX_ROUTE_KINDS = ["transfer-sol", "transfer-token", "mint-token"] as const;
/** A transaction route's kind. */
export type TxRouteKind = typeof TX_ROUTE_KINDS[number];

/**
 * Kinds of transaction request: a route's, or `withdraw`, SOL or a token sent from the managed
 * wallet by its owner or an admin from the dashboard (outside the game policy's limits).
 */
export const TX_KINDS = [...TX_ROUTE_KINDS, "withdraw"] as const;
/** A transaction request's kind. */
export type TxKind = typeof TX_KINDS[number];

/** One event, before encoding. Null fields are dropped from the message. */
export type ServiceEvent =
  | { type: "wallet_linked"; userId: number; address: string }
  | { type: "wallet_unlinked"; userId: number; address: string }
  | {
    type: "tx";
    key: string;
    kind: TxKind;
    status: "confirmed" | "failed";
    signature: string | null;
    userId: number | null;
    error: string | null;
  }
  | {
    type: "watch";
    name: string;
    address: string;
    signature: string;
    slot: number;
    failed: boolean;
  }
  | { type: "ping"; at: number }
  // Rewards (an extension, `/v1/rewards`): `mint` null for SOL, `amount` as granted.
  | (RewardEventFields & { type: "reward_held"; expiresAt: number })
  | (RewardEventFields & { type: "reward_paid"; address: string; signature: string })
  | (RewardEventFields & { type: "reward_expired" | "reward_cancelled" });

/** What every reward event says of its reward. */
export interface RewardEventFields {
  key: string;
  userId: number;
  kind: TxRouteKind;
  mint: string | null;
  amount: string;
}

/** The event type names. */
export type ServiceEventType = ServiceEvent["type"];

/**
 * An event as the project's feed holds it: its id (its position in the feed, a decimal string)
 * and when it was recorded (Unix ms). Published messages carry the same id.
 */
export type RecordedEvent = ServiceEvent & { id: string; createdAt: number };

/**
 * An event as the feed lists it (`GET /v1/events`) and a webhook posts it: `id`, `type`,
 * `createdAt`, then the payload's fields (null ones kept as null).
 */
export function feedEntryOf(event: RecordedEvent): Record<string, unknown> {
  const { id, type, createdAt, ...payload } = event;
  return { id, type, createdAt, ...payload };
}

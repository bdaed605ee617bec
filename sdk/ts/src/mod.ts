/**
 * Blocklink for game backends: a typed client of the game API (`/v1`) for Deno and Node 20+.
 *
 * ```ts
 * import { Blocklink, idempotencyKey } from "@blocklink/client";
 * const blocklink = new Blocklink({ baseUrl: "https://play.example.com" }); // BLOCKLINK_API_KEY
 * const paid = await blocklink.transferSol({
 *   to: { userId: 1001 },
 *   amount: "0.25",
 *   idempotencyKey: idempotencyKey("round-reward", roundId, 1001),
 * });
 * if (!paid.ok) console.error(paid.status, paid.code, paid.message);
 * ```
 *
 * `verifyWebhook` checks a signed webhook's signature and timestamp (`verifyWebhook<FeedEvent>`
 * types the event as the feed's).
 */
export { Blocklink } from "./client.ts";
export type { BlocklinkOptions, CallOptions } from "./transport.ts";
export { EventReader, type EventReaderOptions } from "./feed.ts";
export { idempotencyKey } from "./idempotency_key.ts";
export { verifyWebhook } from "./verify_webhook.ts";
export {
  HOLD_JITTER_SECONDS,
  holdUntil,
  MAX_ATTEMPTS,
  RETRY_DELAYS_MS,
  shouldRetry,
} from "./rules.ts";
export type {
  Answer,
  ClientError,
  EventType,
  FeedEvent,
  OperationId,
  Result,
  ServiceError,
  ServiceErrorCode,
} from "./result.ts";
export type { components, operations, paths } from "./schema.ts";

/**
 * Every error code a `/v1` route can answer, with its HTTP status and when (spec "Errors"), for
 * the OpenAPI document. A route's list in `operations.ts` names the codes it adds to the ones every
 * `/v1` route shares; the conformance check fails on an answered code the route does not list.
 */
import { FEED_READS_PER_SECOND, FEED_STORE_EVENTS_PER_SECOND } from "../../lib/quota/feed_reads.ts";

/** An error code's status and meaning. */
interface ErrorCodeInfo {
  status: number;
  when: string;
}

/** The catalogue, by code. */
export const ERROR_CODES = {
  // Any route.
  invalid_json: {
    status: 400,
    when: "The body is missing, not sent as `application/json`, or not valid JSON",
  },
  invalid_request: {
    status: 400,
    when: "The body or query does not match the schema; the message lists `path: problem` items",
  },
  not_found: { status: 404, when: "No transaction request has this key in the project" },
  payload_too_large: { status: 413, when: "The body is over 16 KB (64 KB for a batch of payouts)" },
  internal: { status: 500, when: "Unexpected error, most often an RPC failure during a read" },
  // Any /v1 route.
  unauthorized: {
    status: 401,
    when: "`x-api-key` missing, malformed, revoked or of a deleted project",
  },
  rate_limited: { status: 429, when: "More than 600 requests this minute for the project" },
  daily_quota_exceeded: {
    status: 429,
    when: "The project used its 100,000 requests for the current UTC day",
  },
  insufficient_scope: {
    status: 403,
    when: "The API key lacks the route's scope: `pay` for the transaction routes, `read` for " +
      "every other route; checked after the quota, so the request was counted",
  },
  feed_rate_limited: {
    status: 429,
    when: `More than ${FEED_READS_PER_SECOND} feed reads this second for the project on one ` +
      `instance of the service, or ${FEED_STORE_EVENTS_PER_SECOND} stored events decoded a ` +
      "second by its reads behind the feed's end",
  },
  // Reads.
  invalid_user_id: { status: 400, when: "`userId` is not a positive integer" },
  invalid_address: { status: 400, when: "A value that must be a Solana address is not" },
  invalid_mint: {
    status: 400,
    when: "The mint does not exist on the project's cluster or is not a token mint",
  },
  invalid_signature: { status: 400, when: "Not a base58 transaction signature" },
  read_budget_exceeded: {
    status: 422,
    when: "The wallet or collection needs more RPC calls or bytes than one read may use",
  },
  // Transactions, in the order they are checked.
  wallet_not_configured: { status: 409, when: "The project has no managed wallet" },
  idempotency_conflict: {
    status: 409,
    when: "The key was used in this project for a different request",
  },
  wallet_not_linked: { status: 404, when: "`to.userId` has no wallet linked to this project" },
  sol_transfers_disabled: { status: 403, when: "The policy has no Max SOL per transfer" },
  mint_not_allowed: { status: 403, when: "The mint is not under the policy's allowed mints" },
  invalid_amount: {
    status: 400,
    when: "The amount is zero or has more decimals than the asset allows",
  },
  amount_over_limit: {
    status: 403,
    when: "The amount is above Max SOL per transfer or the mint's per-transaction maximum",
  },
  invalid_limit_config: {
    status: 422,
    when: "A stored limit cannot be represented with the asset's decimals",
  },
  daily_tx_quota_exceeded: {
    status: 429,
    when: "The project already has 1,000 transactions in the last 24 hours (failed ones excluded)",
  },
  recipient_rate_limited: {
    status: 429,
    when: "The recipient wallet already received the policy's per-recipient maximum this hour",
  },
  player_rate_limited: {
    status: 429,
    when: "The recipient player already received the per-player maximum this hour",
  },
  hourly_budget_exceeded: {
    status: 429,
    when: "This amount would take the asset past its hourly budget",
  },
  daily_failed_tx_quota_exceeded: {
    status: 429,
    when:
      "The project already has 2,000 transactions that failed after signing (those not settled yet included) in the last 24 hours; checked after every limit of the spec",
  },
  wallet_unavailable: {
    status: 502,
    when: "The managed wallet could not sign; the attempt is recorded as failed, nothing sent",
  },
  rpc_error: {
    status: 502,
    when: "The chain RPC could not be reached to build the transaction; recorded as failed",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** A code of the catalogue. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Codes every `/v1` route can answer, checked before the route's own. */
export const V1_COMMON_ERRORS: readonly ErrorCode[] = [
  "unauthorized",
  "rate_limited",
  "daily_quota_exceeded",
  "insufficient_scope",
  "internal",
];

/** The same for the event feed, whose reads have their own limit instead of the quotas. */
export const V1_FEED_ERRORS: readonly ErrorCode[] = [
  "unauthorized",
  "feed_rate_limited",
  "insufficient_scope",
  "internal",
];

/** Codes of a route that reads a JSON body. */
export const BODY_ERRORS: readonly ErrorCode[] = [
  "payload_too_large",
  "invalid_json",
  "invalid_request",
];

/** Codes of the transaction routes after the body checks, in the spec's order (token routes). */
export const TOKEN_TX_ERRORS: readonly ErrorCode[] = [
  "invalid_address",
  "wallet_not_configured",
  "idempotency_conflict",
  "wallet_not_linked",
  "mint_not_allowed",
  "invalid_mint",
  "invalid_amount",
  "amount_over_limit",
  "invalid_limit_config",
  "daily_tx_quota_exceeded",
  "recipient_rate_limited",
  "player_rate_limited",
  "hourly_budget_exceeded",
  "daily_failed_tx_quota_exceeded",
  "wallet_unavailable",
  "rpc_error",
];

/** The same for `transfer-sol`: SOL is allowed by Max SOL per transfer, and needs no mint. */
export const SOL_TX_ERRORS: readonly ErrorCode[] = TOKEN_TX_ERRORS
  .filter((code) => code !== "mint_not_allowed" && code !== "invalid_mint")
  .toSpliced(4, 0, "sol_transfers_disabled");

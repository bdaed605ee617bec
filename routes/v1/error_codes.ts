/**
 * The error codes a `/v1` route can answer, with their HTTP status and when (spec "Errors"), for
 * the OpenAPI document: the game API's part of the service's one catalogue (`core/error_codes.ts`).
 * A route's list in `operations.ts` names the codes it adds to the ones every `/v1` route shares;
 * the conformance check fails on an answered code the route does not list.
 */
import { GAME_API_ERRORS } from "../../core/error_codes.ts";

/** The catalogue's `/v1` part, by code. */
export const ERROR_CODES = GAME_API_ERRORS;

/** A code of the game API. */
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

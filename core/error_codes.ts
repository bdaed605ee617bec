/**
 * Every error code the service answers, with its HTTP status and when: the one catalogue an
 * `ApiError` is built from (`new ApiError(code, message)` looks the status up here, so a code
 * missing from it is a type error). The `/v1` codes, worded as the game API's OpenAPI document
 * states them (`routes/v1/error_codes.ts`), are a part of their own; `elsewhere` says what such a
 * code means outside `/v1` where that differs. The rest are answered by the dashboard, sign-in and
 * linking routes only.
 */
import { FEED_READS_PER_SECOND, FEED_STORE_EVENTS_PER_SECOND } from "./feed_limits.ts";

/** An error code's status and meaning. */
export interface ErrorCodeInfo {
  status: number;
  when: string;
  elsewhere?: string;
}

/** The game API's codes (`/v1`), by code, as its OpenAPI document states them. */
export const GAME_API_ERRORS = {
  // Any route.
  invalid_json: {
    status: 400,
    when: "The body is missing, not sent as `application/json`, or not valid JSON",
  },
  invalid_request: {
    status: 400,
    when: "The body or query does not match the schema; the message lists `path: problem` items",
  },
  not_found: {
    status: 404,
    when: "No transaction request (or reward) has this key in the project",
    elsewhere: "No such route; on the dashboard, a withdrawal line that was never sent",
  },
  payload_too_large: { status: 413, when: "The body is over 16 KB (64 KB for a batch of payouts)" },
  internal: { status: 500, when: "Unexpected error, most often an RPC failure during a read" },
  // Any /v1 route.
  unauthorized: {
    status: 401,
    when: "`x-api-key` missing, malformed, revoked or of a deleted project",
  },
  rate_limited: {
    status: 429,
    when: "More than 600 requests this minute for the project",
    elsewhere: "An abuse limit of the sign-in, linking or dashboard routes, per client address",
  },
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
  invalid_signature: {
    status: 400,
    when: "Not a base58 transaction signature",
    elsewhere: "A sign-in or link signature that is malformed or not the wallet's",
  },
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
  // Rewards.
  reward_hold_limit_exceeded: {
    status: 403,
    when: "The player would hold more of the asset in unpaid rewards than the policy's cap",
  },
  reward_not_cancellable: {
    status: 409,
    when: "The reward is being paid, was paid or expired",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** The codes only the dashboard, sign-in and linking routes answer. */
const SITE_ERRORS = {
  // Dashboard, sign-in and linking.
  not_signed_in: {
    status: 401,
    when: "No dashboard session, or on a linking page no Roblox sign-in; sign in first",
  },
  bad_origin: {
    status: 403,
    when: "A cookie-authenticated request whose `Origin` header is not the service's own",
  },
  challenge_expired: {
    status: 400,
    when: "The sign-in, link or confirmation statement is unknown, used or expired",
  },
  invalid_settings: {
    status: 400,
    when: "A dashboard form's field is refused; the message lists `field: problem` items",
  },
  project_not_found: {
    status: 404,
    when: "The project does not exist, was deleted, or the caller is not its member",
  },
  insufficient_role: { status: 403, when: "The member's role is below the action's" },
  project_limit_reached: {
    status: 403,
    when: "The developer already owns the most projects one may own",
  },
  key_limit_reached: { status: 403, when: "The project already has the most active API keys" },
  key_not_found: { status: 404, when: "No active API key with this id in the project" },
  webhook_limit_reached: {
    status: 403,
    when: "The project already has the most webhook endpoints",
  },
  webhook_not_found: { status: 404, when: "No such webhook endpoint in the project" },
  delivery_not_found: { status: 404, when: "The webhook delivery to replay is unknown or gone" },
  team_limit_reached: {
    status: 403,
    when: "The project already has the most members and pending invitations",
  },
  membership_limit_reached: {
    status: 403,
    when: "The invited developer is already a member of the most projects",
  },
  member_exists: { status: 409, when: "The address is already a member of the project" },
  member_not_found: { status: 404, when: "The address is not a member of the project" },
  invitation_not_found: {
    status: 404,
    when: "No pending invitation for the caller, or its sender may no longer grant the role",
  },
  owner_unchanged: { status: 409, when: "The owner's role cannot be changed or removed" },
  wallet_exists: { status: 409, when: "The project already has a managed wallet" },
  wallets_unavailable: {
    status: 503,
    when: "Managed wallets are not turned on (`WALLET_PROVIDER=none`)",
  },
  key_export_disabled: {
    status: 403,
    when: "Key export is turned off on this deployment (`KEY_EXPORT=off`)",
  },
  key_export_limit_reached: {
    status: 429,
    when: "The managed wallet's key was exported the most times the window allows",
  },
  sandbox_only: {
    status: 403,
    when: "A sandbox convenience asked of a service not running on this machine",
  },
  airdrop_failed: { status: 502, when: "The sandbox cluster refused the airdrop" },
  stand_in_unavailable: {
    status: 502,
    when: "The Roblox stand-ins did not take the sandbox credentials",
  },
  // Roblox.
  connect_app_missing: {
    status: 400,
    when: "The project has no Roblox OAuth app saved for connecting the game",
  },
  no_experience_granted: {
    status: 400,
    when: "The Roblox grant names no experience; pick one on Roblox's consent page",
  },
  roblox_connect_failed: { status: 502, when: "Roblox refused or failed the game's connection" },
  roblox_unavailable: { status: 502, when: "Roblox did not confirm revoking the grant" },
  roblox_request_failed: { status: 502, when: "An Open Cloud call to Roblox failed" },
  not_connected: {
    status: 400,
    when: "The game is not connected through Roblox, or its connection was lost",
  },
  no_game_key: { status: 400, when: "No key was installed in the game to rotate" },
  game_key_installed: {
    status: 409,
    when: "The game already has a key installed by the dashboard: rotate it instead",
  },
  rotation_in_progress: {
    status: 409,
    when: "The game key's rotation moved on meanwhile (servers already restarted, or changed)",
  },
} as const satisfies Record<string, ErrorCodeInfo>;

/** The catalogue: every code the service answers, by code. */
export const API_ERRORS = { ...GAME_API_ERRORS, ...SITE_ERRORS };

/** A code of the catalogue. */
export type ApiErrorCode = keyof typeof API_ERRORS;

/** The HTTP statuses the catalogue's codes use. */
export type ApiErrorStatus = (typeof API_ERRORS)[ApiErrorCode]["status"];

/**
 * Every route of the game API as the OpenAPI document describes it (`openapi.ts` builds the
 * document from this table). Adding a route is one entry here: its path in OpenAPI form, the zod
 * schemas it validates with (body, query), its answer schema (`answers.ts`, named in `ANSWERS`)
 * and the error codes it adds (`error_codes.ts`). `tests/v1/openapi_test.ts` fails while a `/v1`
 * route of the app has no entry.
 */
import { z } from "zod";
import type { ApiKeyScope } from "../../kv/api_keys.ts";
import { txBatchSchema, txBodySchema } from "../../lib/tx/request/request_body.ts";
import {
  assetsAnswer,
  eventFeedAnswer,
  healthAnswer,
  playerRewardsAnswer,
  playerWalletAnswer,
  playerWalletsAnswer,
  projectAnswer,
  rewardAnswer,
  signatureStatusAnswer,
  solBalanceAnswer,
  tokenBalancesAnswer,
  txBatchAnswer,
  txListAnswer,
  txResultAnswer,
} from "./answers.ts";
import { BODY_ERRORS, type ErrorCode } from "./error_codes.ts";
import { bulkSchema } from "./players.ts";
import { userIdSchema } from "../../lib/user_id.ts";
import { feedQuerySchema } from "./events.ts";
import { FEED_READS_PER_SECOND, FEED_STORE_EVENTS_PER_SECOND } from "../../core/feed_limits.ts";
import { assetsQuery, tokensQuery } from "./wallets.ts";
import { addressField, signatureField } from "../../lib/api_fields.ts";
import { rewardBodySchema } from "../../lib/rewards/request_body.ts";
import { REWARD_OPERATIONS } from "./reward_operations.ts";
import { TX_OPERATIONS } from "./tx_operations.ts";

/** Named answer schemas: `components.schemas` of the document. */
export const ANSWERS = {
  Health: healthAnswer,
  Project: projectAnswer,
  PlayerWallet: playerWalletAnswer,
  PlayerWallets: playerWalletsAnswer,
  SolBalance: solBalanceAnswer,
  TokenBalances: tokenBalancesAnswer,
  Assets: assetsAnswer,
  SignatureStatus: signatureStatusAnswer,
  TxResult: txResultAnswer,
  TxList: txListAnswer,
  TxBatch: txBatchAnswer,
  EventFeed: eventFeedAnswer,
  Reward: rewardAnswer,
  PlayerRewards: playerRewardsAnswer,
} as const;

/** Named request bodies: `components.schemas` too. */
export const BODIES = {
  PlayerWalletsRequest: bulkSchema,
  TransferSolRequest: txBodySchema("transfer-sol"),
  TokenTxRequest: txBodySchema("transfer-token"),
  TxBatchRequest: txBatchSchema,
  RewardRequest: rewardBodySchema,
} as const;

/** The document's groups of operations, by resource. */
export const TAGS = {
  Health: "Service status",
  Project: "The project an API key belongs to",
  Players: "Wallets players linked to the project",
  Wallets: "Balances, tokens and NFTs of any wallet, read on the project's cluster",
  Signatures: "Transaction signatures on the project's cluster",
  Transactions: "Payouts from the project's managed wallet, and their status",
  Events: "The project's event feed; game servers also get each event by MessagingService (`v: " +
    "1`, `type`, `id`, the fields), or with `packEvents` (an extension) several in one message, " +
    '`{"v":1,"type":"events","events":[...]}` of at most 1,000 bytes, entries without `v`; a ' +
    "burst the project's cap could not carry within 5 s comes as one notice, " +
    '`{"v":1,"type":"events","through":"<feed id>"}`: read the feed up to that id',
  Rewards: "Rewards for players, held until they link a wallet (an extension)",
} as const;

/** One route as the document describes it. */
export interface Operation {
  /** `operationId`: the method name generated clients (and the SDKs) give the route. */
  id: string;
  tag: keyof typeof TAGS;
  method: "get" | "post";
  /** OpenAPI path form: `{name}` for a parameter. */
  path: string;
  summary: string;
  description: string;
  /** False only for `/health`: every `/v1` route needs the API key. */
  keyed?: false;
  /** The key's scope the route needs: `read` unless given (the transaction routes need `pay`). */
  scope?: ApiKeyScope;
  /** `feed_reads` for the event feed, limited on its own instead of counted toward the quotas. */
  limit?: "feed_reads";
  pathParams?: Record<string, z.ZodType>;
  query?: z.ZodObject;
  body?: keyof typeof BODIES;
  answer: keyof typeof ANSWERS;
  /** Codes beyond `V1_COMMON_ERRORS`, in the order they are checked. */
  errors: readonly ErrorCode[];
}

/** Every route of the game API (and `/health`). */
export const V1_OPERATIONS: readonly Operation[] = [
  {
    id: "getHealth",
    tag: "Health",
    method: "get",
    path: "/health",
    summary: "Service status",
    description: "No key needed; not counted toward any quota.",
    keyed: false,
    answer: "Health",
    errors: [],
  },
  {
    id: "getProject",
    tag: "Project",
    method: "get",
    path: "/v1/project",
    summary: "The key's project",
    description: "Read fresh, so dashboard changes show at once.",
    answer: "Project",
    errors: [],
  },
  {
    id: "getPlayerWallet",
    tag: "Players",
    method: "get",
    path: "/v1/players/{userId}/wallet",
    summary: "One player's wallet",
    description: "Read from the service's own store, not the chain.",
    pathParams: {
      userId: userIdSchema.meta({ description: "The player's Roblox user id" }),
    },
    answer: "PlayerWallet",
    errors: ["invalid_user_id"],
  },
  {
    id: "getPlayerWallets",
    tag: "Players",
    method: "post",
    path: "/v1/players/wallets",
    summary: "Many players' wallets",
    description: "Up to 200 user ids; the whole lookup counts as one request.",
    body: "PlayerWalletsRequest",
    answer: "PlayerWallets",
    errors: BODY_ERRORS,
  },
  {
    id: "getBalance",
    tag: "Wallets",
    method: "get",
    path: "/v1/wallets/{address}/balance",
    summary: "SOL balance",
    description: "On the project's cluster at confirmed commitment; cached about 10 seconds.",
    pathParams: { address: addressField },
    answer: "SolBalance",
    errors: ["invalid_address"],
  },
  {
    id: "getTokens",
    tag: "Wallets",
    method: "get",
    path: "/v1/wallets/{address}/tokens",
    summary: "Token balances",
    description: "One entry per mint, Token and Token-2022 accounts summed. With `mint`, exactly " +
      "one entry (zero amounts when none is held). Cached about 10 seconds.",
    pathParams: { address: addressField },
    query: tokensQuery,
    answer: "TokenBalances",
    errors: ["invalid_request", "invalid_address", "invalid_mint", "read_budget_exceeded"],
  },
  {
    id: "getAssets",
    tag: "Wallets",
    method: "get",
    path: "/v1/wallets/{address}/assets",
    summary: "NFTs owned",
    description: "Through the cluster's DAS endpoint when configured, otherwise classic NFTs " +
      "read from the chain (`image` then null). At most the first 1,000; cached about 10 seconds.",
    pathParams: { address: addressField },
    query: assetsQuery,
    answer: "Assets",
    errors: ["invalid_request", "invalid_address", "read_budget_exceeded"],
  },
  {
    id: "getSignature",
    tag: "Signatures",
    method: "get",
    path: "/v1/signatures/{signature}",
    summary: "Transaction signature status",
    description: "Searches the node's transaction history on the project's cluster; not cached.",
    pathParams: { signature: signatureField },
    answer: "SignatureStatus",
    errors: ["invalid_signature"],
  },
  ...TX_OPERATIONS,
  ...REWARD_OPERATIONS,
  {
    id: "listEvents",
    tag: "Events",
    method: "get",
    path: "/v1/events",
    summary: "Event feed",
    description: "Every event of the project, oldest first, kept 7 days; pass `next` as `after` " +
      "to read on. A reader following `next` sees each event exactly once. `after=latest` " +
      "answers no events and the end of the feed as `next`: where a new reader starts; with " +
      "`recent=<seconds>` it starts at the first event recorded in the last seconds instead. Not " +
      `counted toward the quotas: limited to ${FEED_READS_PER_SECOND} reads a second per project ` +
      "on each instance (`feed_rate_limited`) instead, and reads behind the end of the feed to " +
      `${FEED_STORE_EVENTS_PER_SECOND} events decoded from the store a second (an answer given ` +
      "less may list fewer events than `limit` while more remain: keep reading while `next` " +
      "changes). An event recorded by another instance may take up to a second to appear.",
    limit: "feed_reads",
    query: feedQuerySchema,
    answer: "EventFeed",
    errors: ["invalid_request"],
  },
];

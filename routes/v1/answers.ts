/**
 * The answers of the `/v1` routes as zod schemas, for the OpenAPI document (`openapi.ts`).
 *
 * Routes build their answers from typed domain values, so these schemas are not run on the way
 * out; instead every answer the test suite receives is validated against the document built from
 * them (`tests/support/openapi_conformance.ts`), so a field added, renamed or retyped in the code
 * fails the tests until it is described here. Objects are strict: an undescribed field fails too.
 */
import { z } from "zod";
import { TX_STATUSES } from "../../kv/tx_requests.ts";
import { TX_KINDS, TX_ROUTE_KINDS } from "../../core/events.ts";
import {
  addressField as address,
  int32,
  signatureField,
  slotField,
  unixMsField,
} from "../../lib/api_fields.ts";
import { userIdSchema } from "../../lib/user_id.ts";

const units = z.string().regex(/^[0-9]+$/).meta({ description: "Raw base units" });
const tokenUnits = z.string().regex(/^[0-9]+(\.[0-9]+)?$/).meta({
  description: "Amount in token units, a decimal string without trailing zeros",
});

/** The Project object (`GET /v1/project`). */
export const projectAnswer = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string().meta({ description: "Used in the linking URL; fixed at creation" }),
  cluster: z.enum(["devnet", "mainnet"]),
  walletAddress: address.nullable().meta({ description: "Null until the wallet is created" }),
  linkUrl: z.string().meta({ description: "URL of the hosted linking page" }),
  events: z.boolean().meta({
    description: "True when a universe ID and a publishing key are saved, so events are published",
  }),
}).strict();

/** One player's wallet (`GET /v1/players/{userId}/wallet`). */
export const playerWalletAnswer = z.object({
  userId: userIdSchema,
  address: address.nullable().meta({ description: "Null when the player linked no wallet" }),
  linkedAt: unixMsField.nullable(),
}).strict();

/** Many players' wallets (`POST /v1/players/wallets`). */
export const playerWalletsAnswer = z.object({
  wallets: z.record(z.string().regex(/^[0-9]+$/), address.nullable()).meta({
    description: "One entry per requested user id (as a string): the linked wallet or null",
  }),
}).strict();

/** SOL balance. */
export const solBalanceAnswer = z.object({
  address,
  lamports: units,
  sol: tokenUnits,
}).strict();

/** Token balances, one entry per mint. */
export const tokenBalancesAnswer = z.object({
  address,
  tokens: z.array(
    z.object({
      mint: address,
      amount: units.meta({ description: "Raw base units over every token account of the mint" }),
      decimals: int32(0, 255),
      uiAmount: tokenUnits,
    }).strict(),
  ),
}).strict();

/** NFTs owned. */
export const assetsAnswer = z.object({
  address,
  assets: z.array(
    z.object({
      id: address,
      name: z.string().nullable(),
      collection: address.nullable().meta({ description: "Set only for a verified collection" }),
      image: z.string().nullable().meta({
        description: "Null when assets are read from the chain without a DAS endpoint",
      }),
      interface: z.string().nullable(),
    }).strict(),
  ),
}).strict();

/** Signature status. */
export const signatureStatusAnswer = z.object({
  signature: signatureField,
  status: z.enum(["processed", "confirmed", "finalized", "failed", "unknown"]),
  slot: slotField.nullable(),
  error: z.string().nullable().meta({ description: "On-chain error as JSON when failed" }),
}).strict();

/** TxResult: every transaction route and the status route answer it. */
export const txResultAnswer = z.object({
  idempotencyKey: z.string(),
  kind: z.enum(TX_KINDS).meta({
    description: "The route's kind, or `withdraw`: sent from the dashboard by the project's " +
      "owner or an admin (listed and reported like the routes' requests)",
  }),
  status: z.enum(TX_STATUSES),
  signature: signatureField.nullable().meta({
    description: "Set once the managed wallet signed the transaction",
  }),
  recipient: address.meta({ description: "The wallet the request resolved to" }),
  error: z.string().nullable().meta({ description: "Why it failed, otherwise null" }),
}).strict();

/** `POST /v1/tx/batch`: each item's answer, in the items' order. */
export const txBatchAnswer = z.object({
  items: z.array(
    z.object({
      idempotencyKey: z.string(),
      result: txResultAnswer.nullable().meta({
        description: "What the item's single route would answer with 200; null with an error",
      }),
      error: z.object({
        code: z.string().meta({
          description: "The error the item's single route would answer (a code of " +
            "`transfer-sol`, `transfer-token` or `mint-token` after the body checks)",
        }),
        message: z.string(),
      }).strict().nullable().meta({ description: "Null when the item has a result" }),
    }).strict(),
  ),
}).strict();

const eventHead = {
  id: z.string().regex(/^[1-9][0-9]*$/).meta({
    description: "The event's position in the project's feed; published messages carry it too",
  }),
  createdAt: unixMsField,
};
const userId = userIdSchema;
const rewardEventFields = {
  key: z.string(),
  userId,
  kind: z.enum(TX_ROUTE_KINDS),
  mint: address.nullable().meta({ description: "Null for SOL" }),
  amount: tokenUnits.meta({ description: "The amount as granted" }),
};

/** One event of the feed: its id, type, time and the payload of its type (spec "Events"). */
const feedEvent = z.discriminatedUnion("type", [
  z.object({ ...eventHead, type: z.literal("wallet_linked"), userId, address }).strict(),
  z.object({ ...eventHead, type: z.literal("wallet_unlinked"), userId, address }).strict(),
  z.object({
    ...eventHead,
    type: z.literal("tx"),
    key: z.string(),
    kind: txResultAnswer.shape.kind,
    status: z.enum(["confirmed", "failed"]),
    signature: signatureField.nullable(),
    userId: userId.nullable(),
    error: z.string().nullable(),
  }).strict(),
  z.object({
    ...eventHead,
    type: z.literal("watch"),
    name: z.string(),
    address,
    signature: signatureField,
    slot: slotField,
    failed: z.boolean(),
  }).strict(),
  z.object({ ...eventHead, type: z.literal("ping"), at: unixMsField }).strict(),
  z.object({
    ...eventHead,
    type: z.literal("reward_held"),
    ...rewardEventFields,
    expiresAt: unixMsField,
  }).strict().meta({ description: "A reward granted to a player without a wallet (extension)" }),
  z.object({
    ...eventHead,
    type: z.literal("reward_paid"),
    ...rewardEventFields,
    address,
    signature: signatureField,
  }).strict().meta({ description: "A reward's payment confirmed (extension)" }),
  z.object({ ...eventHead, type: z.literal("reward_expired"), ...rewardEventFields }).strict()
    .meta({ description: "A reward released unpaid at its expiry (extension)" }),
  z.object({ ...eventHead, type: z.literal("reward_cancelled"), ...rewardEventFields }).strict()
    .meta({ description: "A reward cancelled by the game before it was paid (extension)" }),
]);

/** `GET /v1/events`: a page of the feed, oldest first. */
export const eventFeedAnswer = z.object({
  events: z.array(feedEvent),
  next: z.string().regex(/^[0-9]+$/).meta({
    description: "The cursor to pass as `after` next time; the same cursor when nothing is new",
  }),
}).strict();

/** `GET /v1/tx`: a page of the project's transaction requests, newest first. */
export const txListAnswer = z.object({
  transactions: z.array(
    txResultAnswer.extend({
      amount: tokenUnits.meta({ description: "The amount as sent" }),
      mint: address.nullable().meta({ description: "Null for SOL" }),
      userId: userId.nullable().meta({ description: "The recipient player, when known" }),
      createdAt: unixMsField,
      requestedBy: address.nullable().meta({
        description: "The dashboard member (wallet address) who asked for a `withdraw`; null " +
          "for the routes' requests",
      }),
    }).strict(),
  ),
  next: z.string().nullable().meta({
    description: "Cursor for the next (older) page; null once the oldest request was reached",
  }),
}).strict();

/** `GET /health`. */
export const healthAnswer = z.object({
  ok: z.boolean(),
  wallets: z.string().meta({ description: "The wallet provider (`managed`), or `none`" }),
}).strict();

/** A reward (`/v1/rewards`, an extension). */
export const rewardAnswer = z.object({
  key: z.string().meta({ description: "The reward's idempotency key" }),
  userId,
  kind: z.enum(TX_ROUTE_KINDS),
  mint: address.nullable().meta({ description: "Null for SOL" }),
  amount: tokenUnits.meta({ description: "The amount as granted" }),
  status: z.enum(["held", "paying", "paid", "cancelled", "expired"]).meta({
    description: "`held` until its payment is reserved (`paying`), then `paid` once it " +
      "confirmed; `cancelled` by the game or `expired` unpaid. A failed payment makes it `held` " +
      "again (`waitingFor: retry`)",
  }),
  waitingFor: z.enum(["wallet", "room", "retry"]).nullable().meta({
    description: "While `held`: a wallet to be linked, room in the policy's windows, budgets " +
      "or the daily quota, or a retry after `error`; null otherwise (and for an instant after a " +
      "grant to a linked player)",
  }),
  recipient: address.nullable().meta({ description: "The wallet it is being or was paid to" }),
  signature: signatureField.nullable(),
  txKey: z.string().meta({
    description: "The idempotency key of its payment (`reward:<key>`), for `GET /v1/tx/{key}`",
  }),
  error: z.string().nullable().meta({ description: "Why its last payment failed or waits" }),
  createdAt: unixMsField,
  expiresAt: unixMsField,
  settledAt: unixMsField.nullable().meta({ description: "When it was paid, cancelled or expired" }),
}).strict();

/** `GET /v1/players/{userId}/rewards`. */
export const playerRewardsAnswer = z.object({
  rewards: z.array(rewardAnswer).meta({ description: "Newest first, at most 100" }),
}).strict();

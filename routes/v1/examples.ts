/**
 * An example request and answer of every operation, by `operationId`, for the OpenAPI document
 * (`openapi.ts`). `tests/v1/openapi_test.ts` validates each against the document's own schemas,
 * so an example can never show a call the service would refuse or an answer it never gives.
 */

const WALLET = "5ovqdZXUwDgcE6LD39TrsGoDk4Loeed6U5myNMNnCKwJ";
const PLAYER_WALLET = "64o6jeVBp5qeED4xtGpjmSYL4gQvmnMhSL2SaXPS4G5z";
const MINT = "8MiDzUbBVKT48CWiFibn5q3AVh8ekLFgcfT33YE2uhpQ";
const COLLECTION = "57veS2SureHEhxFtFpNB4gFBpPcrRavC7rpmd8xBQSZ";
const ASSET = "CsgyRGffxKeqU36UJN9KC5GDFYbJwJXYYVwtxrEdLzxA";
const SIGNATURE =
  "4y6gbBffx35tUZmFK5EdKPscyjuWer468dsHX5fYVWNttxswRjKVbEJwAa1B135CijYQaUQPuXkdHXScviNQS6nb";
const AT = 1_795_262_400_000;

/** Path and query parameters, a body and the 200 answer of one operation. */
export interface OperationExample {
  params?: Record<string, unknown>;
  body?: unknown;
  answer: unknown;
}

const txResult = {
  idempotencyKey: "round-7:1001",
  kind: "transfer-sol",
  status: "confirmed",
  signature: SIGNATURE,
  recipient: PLAYER_WALLET,
  error: null,
};

const heldReward = {
  key: "round-7:1001",
  userId: 1001,
  kind: "transfer-sol",
  mint: null,
  amount: "0.25",
  status: "held",
  waitingFor: "wallet",
  recipient: null,
  signature: null,
  txKey: "reward:round-7:1001",
  error: null,
  createdAt: AT,
  expiresAt: AT + 30 * 24 * 60 * 60 * 1000,
  settledAt: null,
};
const paidReward = {
  ...heldReward,
  status: "paid",
  waitingFor: null,
  recipient: PLAYER_WALLET,
  signature: SIGNATURE,
  settledAt: AT + 60_000,
};

/** Examples by operation id. */
export const EXAMPLES: Record<string, OperationExample> = {
  getHealth: { answer: { ok: true, wallets: "managed" } },
  getProject: {
    answer: {
      id: "01JD8X6ZQ4M3N2P1R0S9T8V7W6",
      name: "Space Miners",
      slug: "space-miners",
      cluster: "mainnet",
      walletAddress: WALLET,
      linkUrl: "https://play.example.com/link/space-miners",
      events: true,
    },
  },
  getPlayerWallet: {
    params: { userId: 1001 },
    answer: { userId: 1001, address: PLAYER_WALLET, linkedAt: AT },
  },
  getPlayerWallets: {
    body: { userIds: [1001, 1002] },
    answer: { wallets: { "1001": PLAYER_WALLET, "1002": null } },
  },
  getBalance: {
    params: { address: PLAYER_WALLET },
    answer: { address: PLAYER_WALLET, lamports: "1500000000", sol: "1.5" },
  },
  getTokens: {
    params: { address: PLAYER_WALLET, mint: MINT },
    answer: {
      address: PLAYER_WALLET,
      tokens: [{ mint: MINT, amount: "2500000", decimals: 6, uiAmount: "2.5" }],
    },
  },
  getAssets: {
    params: { address: PLAYER_WALLET, collection: COLLECTION },
    answer: {
      address: PLAYER_WALLET,
      assets: [{
        id: ASSET,
        name: "Miner #42",
        collection: COLLECTION,
        image: "https://example.com/miners/42.png",
        interface: "V1_NFT",
      }],
    },
  },
  getSignature: {
    params: { signature: SIGNATURE },
    answer: { signature: SIGNATURE, status: "finalized", slot: 312_004_117, error: null },
  },
  transferSol: {
    body: { to: { userId: 1001 }, amount: "0.25", idempotencyKey: "round-7:1001" },
    answer: { ...txResult, idempotencyKey: "round-7:1001" },
  },
  transferToken: {
    body: {
      to: { address: PLAYER_WALLET },
      mint: MINT,
      amount: "2.5",
      idempotencyKey: "quest-3:1001",
    },
    answer: { ...txResult, idempotencyKey: "quest-3:1001", kind: "transfer-token" },
  },
  mintToken: {
    body: { to: { userId: 1001 }, mint: MINT, amount: "10", idempotencyKey: "badge-9:1001" },
    answer: {
      ...txResult,
      idempotencyKey: "badge-9:1001",
      kind: "mint-token",
      status: "submitted",
    },
  },
  transferBatch: {
    body: {
      items: [
        {
          kind: "transfer-sol",
          to: { userId: 1001 },
          amount: "0.25",
          idempotencyKey: "round-8:1001",
        },
        {
          kind: "transfer-sol",
          to: { userId: 1002 },
          amount: "0.25",
          idempotencyKey: "round-8:1002",
        },
        {
          kind: "mint-token",
          to: { userId: 1001 },
          mint: MINT,
          amount: "1",
          idempotencyKey: "badge-2:1001",
        },
      ],
    },
    answer: {
      items: [
        {
          idempotencyKey: "round-8:1001",
          result: { ...txResult, idempotencyKey: "round-8:1001" },
          error: null,
        },
        {
          idempotencyKey: "round-8:1002",
          result: null,
          error: {
            code: "wallet_not_linked",
            message: "The player has no wallet linked to this project",
          },
        },
        {
          idempotencyKey: "badge-2:1001",
          result: {
            ...txResult,
            idempotencyKey: "badge-2:1001",
            kind: "mint-token",
            status: "submitted",
          },
          error: null,
        },
      ],
    },
  },
  getTx: { params: { idempotencyKey: "round-7:1001" }, answer: txResult },
  grantReward: {
    body: { userId: 1001, kind: "transfer-sol", amount: "0.25", idempotencyKey: "round-7:1001" },
    answer: heldReward,
  },
  getReward: { params: { key: "round-7:1001" }, answer: paidReward },
  cancelReward: {
    params: { key: "round-7:1001" },
    answer: { ...heldReward, status: "cancelled", waitingFor: null, settledAt: AT + 60_000 },
  },
  listPlayerRewards: { params: { userId: 1001 }, answer: { rewards: [paidReward] } },
  listTx: {
    params: { status: "confirmed", limit: 20 },
    answer: {
      transactions: [{
        ...txResult,
        amount: "0.25",
        mint: null,
        userId: 1001,
        createdAt: AT,
        requestedBy: null,
      }],
      next: null,
    },
  },
  listEvents: {
    params: { after: "41", limit: 100, types: ["tx", "wallet_linked"] },
    answer: {
      events: [
        { id: "42", type: "wallet_linked", createdAt: AT, userId: 1001, address: PLAYER_WALLET },
        {
          id: "43",
          type: "tx",
          createdAt: AT + 2_000,
          key: "round-7:1001",
          kind: "transfer-sol",
          status: "confirmed",
          signature: SIGNATURE,
          userId: 1001,
          error: null,
        },
      ],
      next: "43",
    },
  },
};

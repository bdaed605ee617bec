/**
 * The transaction routes (`tx.ts`, `tx_list.ts`) as the OpenAPI document describes them: their
 * entries of `V1_OPERATIONS` (`operations.ts`).
 */
import { idempotencyKeySchema, MAX_BATCH_ITEMS } from "../../lib/tx/request/request_body.ts";
import { BODY_ERRORS, SOL_TX_ERRORS, TOKEN_TX_ERRORS } from "./error_codes.ts";
import type { Operation } from "./operations.ts";
import { txListQuerySchema } from "./tx_list.ts";

/** The three payout routes, the batch, the status route and the list. */
export const TX_OPERATIONS: readonly Operation[] = [
  {
    id: "transferSol",
    tag: "Transactions",
    method: "post",
    path: "/v1/tx/transfer-sol",
    scope: "pay",
    summary: "Send SOL",
    description: "Signed and sent by the managed wallet; waits up to 15 s for confirmation, then " +
      "answers `submitted`. Safe to retry with the same `idempotencyKey`. A `failed` status is " +
      "an answer, not an error.",
    body: "TransferSolRequest",
    answer: "TxResult",
    errors: [...BODY_ERRORS, ...SOL_TX_ERRORS],
  },
  {
    id: "transferToken",
    tag: "Transactions",
    method: "post",
    path: "/v1/tx/transfer-token",
    scope: "pay",
    summary: "Send a token",
    description: "Checked transfer under the mint's own token program; the recipient's " +
      "associated token account is created if needed. Same waiting and retry rules as SOL.",
    body: "TokenTxRequest",
    answer: "TxResult",
    errors: [...BODY_ERRORS, ...TOKEN_TX_ERRORS],
  },
  {
    id: "mintToken",
    tag: "Transactions",
    method: "post",
    path: "/v1/tx/mint-token",
    scope: "pay",
    summary: "Mint a token",
    description: "The managed wallet must be the mint authority, otherwise the answer is 200 " +
      "with `failed`. Same waiting and retry rules as SOL.",
    body: "TokenTxRequest",
    answer: "TxResult",
    errors: [...BODY_ERRORS, ...TOKEN_TX_ERRORS],
  },
  {
    id: "transferBatch",
    tag: "Transactions",
    method: "post",
    path: "/v1/tx/batch",
    scope: "pay",
    summary: "Send a batch of payouts",
    description: `Up to ${MAX_BATCH_ITEMS} items of any kind, each the body of its single route ` +
      "plus its `kind`, with an `idempotencyKey` of its own; one counted request. Each item " +
      "passes the single route's checks and limits in the items' order and answers what its " +
      "route would (a TxResult, or its error: one item's error does not fail the others). Items " +
      "of one kind and asset share transactions (up to 8 SOL transfers, or 6 token transfers or " +
      "mints, each: one fee), and the keys of a shared transaction share its fate. Safe to " +
      "retry: an item whose key was used, by a batch or a single request, answers as that " +
      "request and sends nothing new. A malformed batch (or two items with one key) is one 400.",
    body: "TxBatchRequest",
    answer: "TxBatch",
    errors: [...BODY_ERRORS],
  },
  {
    id: "getTx",
    tag: "Transactions",
    method: "get",
    path: "/v1/tx/{idempotencyKey}",
    summary: "Transaction request status",
    description: "Authoritative status of the key's latest attempt.",
    pathParams: {
      idempotencyKey: idempotencyKeySchema.meta({ description: "The request's key, URL-encoded" }),
    },
    answer: "TxResult",
    errors: ["not_found"],
  },
  {
    id: "listTx",
    tag: "Transactions",
    method: "get",
    path: "/v1/tx",
    summary: "Transaction list",
    description: "The project's transaction requests, newest first, a page at a time; pass " +
      "`next` as `after` for the next (older) page.",
    query: txListQuerySchema,
    answer: "TxList",
    errors: ["invalid_request"],
  },
];

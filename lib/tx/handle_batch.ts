/**
 * `POST /v1/tx/batch`: up to `MAX_BATCH_ITEMS` payouts in one counted request.
 *
 * | Steps   | How a batch takes them                                                          |
 * | ------- | ------------------------------------------------------------------------------- |
 * | 1, 2    | once, by the guard                                                              |
 * | 3, 4    | the body whole: a malformed batch is one 400, nothing reserved                  |
 * | 5 to 13 | each item as if it came alone (`checks.ts`, `reserve.ts`), in order, with its   |
 * |         | own key, answer and `tx` event: a refused item answers its error, a limit       |
 * |         | running out refuses the later items; a key already used answers as its request  |
 * |         | does, so a retried batch pays each item at most once                            |
 * | 14      | the reserved items of one kind and asset share transactions,                    |
 * |         | `maxSharedPayments(kind)` each: stored with it before it is sent, then refused, |
 * |         | landed or expired together, in one commit (`send_and_wait.ts`)                  |
 *
 * Each key's background confirmation follows the shared signature; a key retried alone after its
 * transaction failed gets an attempt of its own once the shared one is proven dead
 * (`retry_proof.ts`).
 */
import type { TxContext } from "./runtime.ts";
import type { Admission } from "../quota/admission.ts";
import { ApiError } from "../../core/api_error.ts";
import type { TxRouteKind } from "../../core/events.ts";
import { type CheckedRequest, checkTxRequest, type TxCaller } from "./request/checks.ts";
import { reserveTxRequest } from "./send/reserve.ts";
import { txPlanOf } from "./handle_request.ts";
import { sendAndWait } from "./send/send_and_wait.ts";
import { maxSharedPayments } from "./build/build.ts";
import { type TxResult, txResultOf } from "./lifecycle/result.ts";
import type { TxRequestInput } from "./request/request_body.ts";
import type { TxRequestRecord } from "../../kv/tx_requests.ts";
import type { Deadline } from "./rpc/timing.ts";

/** One item of a batch: its kind and the body its single route would take. */
export interface TxBatchItem {
  kind: TxRouteKind;
  input: TxRequestInput;
}

/** One item's answer: what its single route would answer, a TxResult or an error (the other null). */
export interface TxBatchItemAnswer {
  idempotencyKey: string;
  result: TxResult | null;
  error: { code: string; message: string } | null;
}

interface Reserved {
  index: number;
  request: CheckedRequest;
  entry: Deno.KvEntry<TxRequestRecord>;
}

/** Runs every item of a batch; answers in the items' order. */
export async function handleTxBatch(
  ctx: TxContext,
  caller: TxCaller,
  items: readonly TxBatchItem[],
  options: { deadline: Deadline; admission: Admission },
): Promise<TxBatchItemAnswer[]> {
  const { deadline } = options;
  const answers: Array<TxBatchItemAnswer | undefined> = items.map(() => undefined);
  const answer = (index: number, result: TxResult) => {
    answers[index] = { idempotencyKey: result.idempotencyKey, result, error: null };
  };
  const fail = (index: number, error: unknown) => {
    if (!(error instanceof ApiError)) throw error;
    const idempotencyKey = items[index]!.input.idempotencyKey;
    answers[index] = {
      idempotencyKey,
      result: null,
      error: { code: error.code, message: error.message },
    };
  };
  // Steps 5 to 11 read, and write nothing: all at once.
  const checked = await Promise.all(items.map(async (item, index) => {
    try {
      const outcome = await checkTxRequest(ctx, caller, item.kind, item.input, options);
      if (outcome.kind === "existing") answer(index, txResultOf(outcome.record));
      else return outcome.request;
    } catch (error) {
      fail(index, error);
    }
    return null;
  }));
  // Steps 12 and 13 and the reservations, in the items' order.
  const reserved: Reserved[] = [];
  for (const [index, request] of checked.entries()) {
    if (!request) continue;
    try {
      const outcome = await reserveTxRequest(ctx, request, {
        deadline,
        admission: options.admission,
      });
      if (outcome.kind === "existing") answer(index, txResultOf(outcome.record));
      else reserved.push({ index, request, entry: outcome.entry });
    } catch (error) {
      fail(index, error);
    }
  }
  // Step 14: one transaction per group of one kind and asset, up to its size.
  await Promise.all(
    sharedTransactions(reserved).map(async (group) => {
      const plan = txPlanOf(
        group[0]!.request,
        group.map(({ request, entry }) => ({
          attemptId: entry.value.attemptId,
          recipient: request.recipient,
          amount: request.amount,
        })),
      );
      const entries = group.map((item) => item.entry);
      const outcomes = await sendAndWait(ctx, plan, { entries, deadline });
      for (const [i, outcome] of outcomes.entries()) {
        const index = group[i]!.index;
        if (outcome.kind === "result") answer(index, outcome.result);
        else fail(index, outcome.error);
      }
    }),
  );
  return answers.map((answer) => answer!);
}

/** The reserved items grouped by kind and asset, in order, cut to each kind's transaction size. */
function sharedTransactions(reserved: Reserved[]): Reserved[][] {
  const groups = new Map<string, Reserved[][]>();
  for (const item of reserved) {
    const key = `${item.request.kind}:${item.request.asset}`;
    const chunks = groups.get(key) ?? [];
    const last = chunks.at(-1);
    if (last && last.length < maxSharedPayments(item.request.kind)) last.push(item);
    else chunks.push([item]);
    groups.set(key, chunks);
  }
  return [...groups.values()].flat();
}

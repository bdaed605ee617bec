/**
 * One transaction request, from arrival to answer: the entry of the transaction routes. The spec's
 * order of checks (first failure answers) and where each step lives:
 *
 * | Step | Check                                             | File                                |
 * | ---- | ------------------------------------------------- | ----------------------------------- |
 * | 1    | API key (read again, and checked by the reservation) | `routes/v1/guard.ts`, `lib/tx/request/checks.ts`, `lib/tx/send/reserve.ts` |
 * | 2    | Request quota                                     | `routes/v1/guard.ts`, `lib/quota/request_quota.ts` |
 * |      | (beyond the spec) the key has the `pay` scope     | `routes/v1/guard.ts`                |
 * | 3    | Body is JSON                                      | `http/validate.ts`                  |
 * | 4    | Body matches schema                               | `routes/v1/tx_body.ts`              |
 * | 5    | `mint` is an address                              | `lib/tx/request/checks.ts`                  |
 * | 6    | Managed wallet exists                             | `lib/tx/request/checks.ts`                  |
 * | 7    | Key new or used for the same body                 | `lib/tx/request/checks.ts`                  |
 * | 8    | `to` resolves to a wallet                         | `lib/tx/request/checks.ts`                  |
 * | 9    | Asset allowed                                     | `lib/tx/request/checks.ts`                  |
 * | 10   | Mint exists on the cluster                        | `lib/tx/request/checks.ts`                  |
 * | 11   | Amount valid and within per-transaction limit     | `lib/tx/request/checks.ts`                  |
 * | 12   | Daily transaction quota                           | `lib/tx/request/limits.ts`                  |
 * | 13   | Recipient, player and budget limits; then (beyond the spec) the daily cap on failures | `lib/tx/request/limits.ts` |
 * |      | Reservation, with steps 12 and 13 in its commit   | `lib/tx/send/reserve.ts`                 |
 * | 14   | Build and sign, then send and wait                | `lib/tx/build/build.ts`, `lib/tx/send/send_and_wait.ts` |
 *
 * Step 1 is checked again on the key's and the project's records (the guard's look-up is cached
 * 10 s), and the reservation's commit is checked on both, so once a revocation was answered no
 * instance reserves with that key. Every payout runs once, from the reads its checks and its
 * reservation decide on. After the answer the follower's background strategy (`follower.ts`)
 * follows the attempt, and every status change is one event of its lifecycle (`lifecycle.ts`).
 *
 * Idempotency: a key is reserved only at step 13, in the limits' checked commit (a refused request
 * holds no key; concurrent ones reserve it once); used with another body it is
 * `idempotency_conflict`, with the same body it is answered as stored; a `failed` key is sent again
 * only once its latest attempt is proven dead, and one found landed becomes `confirmed`
 * (`retry_proof.ts`). Keys are kept for ever, except one that failed without leaving the node:
 * forgotten 30 days later (`transitions.ts`).
 */
import type { TxContext } from "./runtime.ts";
import type { Admission } from "../quota/admission.ts";
import { txResultOf } from "./lifecycle/result.ts";
import type { TxRequestInput } from "./request/request_body.ts";
import { checkTxRequest } from "./request/checks.ts";
import { failUnbuilt, sendStoredAndWait } from "./send/send_and_wait.ts";
import { signPlan, type TxPayment, type TxPlan } from "./build/build.ts";
import { reserveTxRequest } from "./send/reserve.ts";
import type { Deadline } from "./rpc/timing.ts";
import type { TxResult } from "./lifecycle/result.ts";
import type { TxRouteKind } from "../../core/events.ts";
import type { CheckedRequest, TxCaller } from "./request/checks.ts";

/**
 * Checks, reserves and sends a request; answers its TxResult or throws the first failing check.
 * Every RPC call, retry and wait on the way ends at `options.deadline`, started on the request's
 * arrival by the route.
 */
export async function handleTxRequest(
  ctx: TxContext,
  caller: TxCaller,
  kind: TxRouteKind,
  input: TxRequestInput,
  options: { deadline: Deadline; admission: Admission },
): Promise<TxResult> {
  const checked = await checkTxRequest(ctx, caller, kind, input, options);
  if (checked.kind === "existing") return txResultOf(checked.record);
  return await reserveAndSend(ctx, checked.request, options);
}

/**
 * Reserves a checked request (steps 12 and 13 with the key, `reserve.ts`) with its transaction
 * built and signed beside the reservation and stored by its commit (step 14), then sends it: the
 * one money path of payouts and withdrawals (`withdraw.ts`). `admission`: the request's step 2,
 * settled before any place is taken or by the reservation's own commit.
 */
export async function reserveAndSend(
  ctx: TxContext,
  request: CheckedRequest,
  options: { deadline: Deadline; admission?: Admission | undefined },
): Promise<TxResult> {
  const { deadline } = options;
  const reserved = await reserveTxRequest(ctx, request, {
    deadline,
    admission: options.admission,
    sign: (attemptId) =>
      signPlan(
        ctx,
        txPlanOf(request, [{
          attemptId,
          recipient: request.recipient,
          amount: request.amount,
        }]),
        { deadline },
      ),
  });
  if (reserved.kind === "existing") return txResultOf(reserved.record);
  const [outcome] = reserved.unbuilt
    ? await failUnbuilt(ctx, [reserved.entry], reserved.unbuilt)
    : await sendStoredAndWait(ctx, [reserved.entry], { deadline });
  if (outcome!.kind === "error") throw outcome!.error;
  return outcome!.result;
}

/** The transaction paying `payments` of checked requests of one kind and asset (the first's). */
export function txPlanOf(request: CheckedRequest, payments: TxPayment[]): TxPlan {
  return {
    projectId: request.project.id,
    cluster: request.project.cluster,
    kind: request.kind,
    walletAddress: request.walletAddress,
    mint: request.mint,
    payments,
  };
}

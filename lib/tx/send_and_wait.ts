/**
 * Step 14 and the confirmation wait of a reserved attempt: build, sign, store the signed bytes,
 * send, then follow it for up to the confirmation wait. The whole route answers within the
 * request's deadline (`timing.answerWithinMs` from its arrival) whatever the RPC does: every RPC
 * call aborts at the deadline, and the wait ends there too.
 *
 * Once the signed bytes are stored the attempt counts as sent. The one send whose preflight
 * refusal settles it `failed` is the first, and only when the refusal is about the transaction
 * itself: `BlockhashNotFound` or `AlreadyProcessed` (a node may answer them for a copy it did
 * forward) are followed like an unclear answer.
 */
import type { Signature } from "@solana/kit";
import type { TxContext } from "./runtime.ts";
import { ApiError } from "../../core/api_error.ts";
import { log } from "../../core/log.ts";
import { WalletUnavailableError } from "../wallets/provider.ts";
import { getTxRequest, type TxRequestRecord } from "../../kv/tx_requests.ts";
import { txResultOf } from "./result.ts";
import { BuildError, buildSignedTx, type TxPlan } from "./build.ts";
import {
  attemptRef,
  isFinal,
  markAccepted,
  markSubmitted,
  recordSigned,
  settleAttempt,
} from "./transitions.ts";
import { callSignals, type Deadline, rpcSignal } from "./timing.ts";
import { confirmAttempt, sendSignedTx } from "./confirm.ts";
import type { TxResult } from "./result.ts";

/** Builds, signs, sends and waits for the reserved attempt; answers its TxResult or throws a 502. */
export async function sendAndWait(
  ctx: TxContext,
  plan: TxPlan,
  options: { entry: Deno.KvEntry<TxRequestRecord>; deadline: Deadline },
): Promise<TxResult> {
  const { entry, deadline } = options;
  const ref = attemptRef(entry.value);
  const fields = {
    projectId: ref.projectId,
    idempotencyKey: ref.key,
    attempt: entry.value.attempt,
  };
  let built;
  try {
    built = await buildSignedTx(ctx, plan, { deadline });
  } catch (error) {
    if (error instanceof BuildError) {
      await settleAttempt(ctx, ref, { status: "failed", error: error.message });
      throw new ApiError(502, "rpc_error", error.message);
    }
    if (error instanceof WalletUnavailableError) {
      await settleAttempt(ctx, ref, { status: "failed", error: error.message });
      throw new ApiError(502, "wallet_unavailable", error.message);
    }
    await settleAttempt(ctx, ref, {
      status: "failed",
      error: "Could not build the transaction: internal error",
    });
    throw error;
  }

  const timing = ctx.tx.timing;
  const stored = await recordSigned(ctx, entry, {
    signature: built.signature,
    tx: { ...built.tx, signedAt: ctx.clock.now() },
  });
  if (!stored) {
    // Nothing was sent: the attempt was declared abandoned, or its sign-by time is over.
    const current = await currentRecord(ctx, entry.value);
    if (current.attemptId === ref.attemptId && !isFinal(current) && !current.signed) {
      const error = new BuildError("the RPC node did not answer in time");
      await settleAttempt(ctx, ref, { status: "failed", error: error.message }, {
        onlyIf: (record) => record.signed === null,
      });
      throw new ApiError(502, "rpc_error", error.message);
    }
    log("warn", "Signed transaction not sent: the attempt changed", fields);
    return txResultOf(current);
  }

  const rpc = ctx.rpc[plan.cluster];
  let record = stored.value;
  const first = await sendSignedTx(rpc, record.signed!, {
    abortSignal: rpcSignal(timing, deadline),
  });
  if (first.kind === "rejected" && !first.harmless) {
    // Preflight refused the transaction itself, so the node did not forward it: nothing was sent
    // (unless another path's resend was accepted meanwhile, which then decides).
    const settled = await settleAttempt(ctx, ref, {
      status: "failed",
      error: first.error,
      refused: true,
    }, { onlyIf: (current) => current.signed?.accepted === false });
    return txResultOf(settled ?? record);
  }
  if (first.kind === "accepted") {
    // Stored at once, so every later send (from any path) skips preflight.
    record = (await markAccepted(ctx, ref)) ?? record;
  } else {
    log("warn", "First send got no clear answer; rebroadcasting", {
      ...fields,
      reason: first.kind === "unknown" ? first.reason : first.error,
    });
  }

  const waitEnd = performance.now() + Math.min(timing.confirmWaitMs, deadline.left());
  let lastSent = performance.now();
  while (!isFinal(record)) {
    const left = waitEnd - performance.now();
    if (left <= 0) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(timing.routePollMs, left)));
    const rebroadcast = performance.now() - lastSent >= timing.rebroadcastMs;
    if (rebroadcast) lastSent = performance.now();
    record = await confirmAttempt(ctx, record, {
      rebroadcast,
      signals: callSignals(timing, deadline),
    });
    if (record.attemptId !== ref.attemptId) break;
  }
  if (isFinal(record) || record.attemptId !== ref.attemptId) return txResultOf(record);

  const submitted = await markSubmitted(ctx, ref);
  log("info", "Transaction submitted; confirmation continues in the background", {
    ...fields,
    signature: built.signature as Signature,
  });
  return txResultOf(submitted ?? record);
}

async function currentRecord(ctx: TxContext, fallback: TxRequestRecord): Promise<TxRequestRecord> {
  return (await getTxRequest(ctx.kv, fallback.projectId, fallback.key)) ?? fallback;
}

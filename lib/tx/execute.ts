/**
 * Step 14 and the confirmation wait of a reserved attempt: build, sign, store the signed bytes
 * (with the durable background check), send, then follow it for up to the confirmation wait.
 */
import type { Signature } from "@solana/kit";
import type { AppContext } from "../context.ts";
import { ApiError } from "../http/errors.ts";
import { log } from "../log.ts";
import { WalletUnavailableError } from "../wallets/provider.ts";
import { getTxRequest, type TxRequestRecord, txResultOf } from "../../kv/tx_requests.ts";
import { BuildError, buildSignedTx, type TxPlan } from "./build.ts";
import { attemptRef, isFinal, recordSigned, settleAttempt, updateUnsettled } from "./settle.ts";
import { checkAttempt, sendSignedTx } from "./track.ts";
import type { TxResult } from "./types.ts";

/** Builds, signs, sends and waits for the reserved attempt; answers its TxResult or throws a 502. */
export async function executeAttempt(
  ctx: AppContext,
  plan: TxPlan,
  entry: Deno.KvEntry<TxRequestRecord>,
): Promise<TxResult> {
  const ref = attemptRef(entry.value);
  const fields = {
    projectId: ref.projectId,
    idempotencyKey: ref.key,
    attempt: entry.value.attempt,
  };
  let built;
  try {
    built = await buildSignedTx(ctx, plan);
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
  const signedAt = ctx.clock.now();
  const stored = await recordSigned(ctx, entry, {
    signature: built.signature,
    tx: { ...built.tx, signedAt },
    // The durable check takes over where the route's wait ends, even if this instance dies.
    checkAt: signedAt + timing.confirmWaitMs + timing.checkIntervalMs,
  });
  if (!stored) {
    // The attempt changed before anything was sent (declared abandoned): answer what is stored.
    const current = await currentRecord(ctx, entry.value);
    log("warn", "Signed transaction not sent: the attempt changed", fields);
    return txResultOf(current);
  }
  ctx.jobWaker.wake();

  const rpc = ctx.rpc[plan.cluster];
  let record = stored.value;
  const first = await sendSignedTx(rpc, record.signed!, {
    abortSignal: AbortSignal.timeout(timing.rpcTimeoutMs),
  });
  if (first.kind === "rejected") {
    // Preflight refused it, so the node did not forward it: nothing was sent.
    const settled = await settleAttempt(ctx, ref, { status: "failed", error: first.error });
    return txResultOf(settled ?? record);
  }
  let accepted = first.kind === "accepted";
  if (first.kind === "unknown") {
    log("warn", "First send got no clear answer; rebroadcasting", {
      ...fields,
      reason: first.reason,
    });
  }
  record = { ...record, signed: { ...record.signed!, accepted } };

  const started = performance.now();
  let lastSent = started;
  while (true) {
    const left = timing.confirmWaitMs - (performance.now() - started);
    if (left <= 0) break;
    await new Promise((resolve) => setTimeout(resolve, Math.min(timing.routePollMs, left)));
    const rebroadcast = performance.now() - lastSent >= timing.rebroadcastMs;
    if (rebroadcast) lastSent = performance.now();
    record = await checkAttempt(ctx, record, { rebroadcast });
    if (isFinal(record)) return txResultOf(record);
    accepted ||= record.signed?.accepted ?? false;
  }

  const submitted = await updateUnsettled(ctx, ref, (current) =>
    current.status === "pending"
      ? {
        ...current,
        status: "submitted",
        signed: current.signed
          ? { ...current.signed, accepted: current.signed.accepted || accepted }
          : null,
      }
      : null);
  log("info", "Transaction submitted; confirmation continues in the background", {
    ...fields,
    signature: built.signature as Signature,
  });
  return txResultOf(submitted ?? record);
}

async function currentRecord(ctx: AppContext, fallback: TxRequestRecord): Promise<TxRequestRecord> {
  return (await getTxRequest(ctx.kv, fallback.projectId, fallback.key)) ?? fallback;
}

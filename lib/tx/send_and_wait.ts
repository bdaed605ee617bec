/**
 * Step 14 and the confirmation wait of reserved attempts that share one transaction (a single
 * request's one attempt, or up to `maxSharedPayments` items of a batch of one kind and asset):
 * build, sign, store the signed bytes with every attempt, send, then follow it for up to the
 * confirmation wait. The keys of a shared transaction share its fate: built and signed together
 * (a 502 fails them all), stored together, refused, landed or confirmed together. The route
 * answers within the request's deadline (`timing.answerWithinMs` from its arrival) whatever the
 * RPC does: every RPC call aborts at the deadline, the wait ends there too, and so does the wait
 * for the project's turn to settle (past it the route answers `submitted` and the background
 * settles).
 *
 * Once the signed bytes are stored the attempts count as sent. The one send whose preflight
 * refusal settles them `failed` is the first, and only when the refusal is about the transaction
 * itself: `BlockhashNotFound` or `AlreadyProcessed` (a node may answer them for a copy it did
 * forward) are followed like an unclear answer. While the route waits it is the only sender (the
 * background resends only once the route is over), so whether a node accepted a send is kept in
 * memory and stored with the answer (`markSubmitted`), not in a commit of its own.
 */
import type { Signature } from "@solana/kit";
import type { TxContext } from "./runtime.ts";
import { ApiError } from "../../core/api_error.ts";
import { CommitConflictError } from "../../core/commit_retry.ts";
import { log } from "../../core/log.ts";
import { WalletUnavailableError } from "../wallets/provider.ts";
import { getTxRequest, type SignedTx, type TxRequestRecord } from "../../kv/tx_requests.ts";
import { type TxResult, txResultOf } from "./result.ts";
import { BuildError, buildSignedTx, type TxPlan } from "./build.ts";
import { attemptRef, isFinal, recordSigned, settleAttempt } from "./transitions.ts";
import { markSubmitted } from "./attempt_marks.ts";
import { type Deadline, rpcSignal } from "./timing.ts";
import { sendSignedTx } from "./confirm.ts";
import { landedVerdict } from "./expiry_proof.ts";

/** What one attempt of the transaction answers: its TxResult, or the 502 its route answers. */
export type AttemptOutcome =
  | { kind: "result"; result: TxResult }
  | { kind: "error"; error: ApiError };

/**
 * Builds, signs, sends and waits for the reserved attempts (`entries`, in `plan.payments`'
 * order); answers each one's outcome in that order.
 */
export async function sendAndWait(
  ctx: TxContext,
  plan: TxPlan,
  options: { entries: Deno.KvEntry<TxRequestRecord>[]; deadline: Deadline },
): Promise<AttemptOutcome[]> {
  const { entries, deadline } = options;
  const refs = entries.map((entry) => attemptRef(entry.value));
  let built;
  try {
    built = await buildSignedTx(ctx, plan, { deadline });
  } catch (error) {
    const failure = error instanceof BuildError
      ? new ApiError(502, "rpc_error", error.message)
      : error instanceof WalletUnavailableError
      ? new ApiError(502, "wallet_unavailable", error.message)
      : null;
    const message = failure?.message ?? "Could not build the transaction: internal error";
    await Promise.all(
      refs.map((ref) => settleAttempt(ctx, ref, { status: "failed", error: message })),
    );
    if (!failure) throw error;
    return refs.map(() => ({ kind: "error", error: failure }));
  }

  const tx: SignedTx = { ...built.tx, signedAt: ctx.clock.now() };
  const storedEntries = await recordSigned(ctx, entries, { signature: built.signature, tx });
  if (!storedEntries) return await notStored(ctx, entries);
  const stored = storedEntries.map((entry) => entry.value);

  const timing = ctx.tx.timing;
  const rpc = ctx.rpc[plan.cluster];
  const signature = built.signature as Signature;
  const fields = {
    projectId: plan.projectId,
    idempotencyKeys: stored.map((r) => r.key),
    signature,
  };
  const first = await sendSignedTx(rpc, tx, { abortSignal: rpcSignal(timing, deadline) });
  if (first.kind === "rejected" && !first.harmless) {
    // Preflight refused the transaction itself, so the node did not forward it: nothing was sent.
    return await settleAll(ctx, storedEntries, {
      status: "failed",
      error: first.error,
      refused: true,
    }, { onlyIf: (current) => current.signed?.accepted === false, accepted: false });
  }
  let accepted = first.kind === "accepted";
  if (first.kind !== "accepted") {
    log("warn", "First send got no clear answer; rebroadcasting", {
      ...fields,
      reason: first.kind === "unknown" ? first.reason : first.error,
    });
  }

  const waitEnd = performance.now() + Math.min(timing.confirmWaitMs, deadline.left());
  let lastSent = performance.now();
  for (;;) {
    const left = waitEnd - performance.now();
    if (left <= 0) break;
    let status;
    try {
      status = await ctx.tx.statuses.next(
        plan.cluster,
        signature,
        AbortSignal.any([deadline.signal, AbortSignal.timeout(left)]),
      );
    } catch {
      // A failed lookup leaves the attempts as they are; the wait goes on until its end.
      continue;
    }
    const verdict = status ? landedVerdict(status) : null;
    if (verdict?.kind === "confirmed" || verdict?.kind === "failed") {
      const outcome = verdict.kind === "confirmed"
        ? { status: "confirmed" as const }
        : { status: "failed" as const, error: verdict.error };
      return await settleAll(ctx, storedEntries, outcome, { signal: deadline.signal, accepted });
    }
    if (performance.now() - lastSent < timing.rebroadcastMs || verdict?.kind === "unconfirmed") {
      continue;
    }
    // Every send re-reads the stored attempt first: one settled by another path is not resent.
    const current = await getTxRequest(ctx.reads, stored[0]!.projectId, stored[0]!.key);
    if (!current || current.attemptId !== stored[0]!.attemptId || isFinal(current)) break;
    lastSent = performance.now();
    const sent = await sendSignedTx(rpc, { ...tx, accepted }, {
      abortSignal: rpcSignal(timing, deadline),
    });
    if (sent.kind === "accepted") accepted = true;
  }
  return await Promise.all(storedEntries.map(async (known) => {
    const record = known.value;
    const now = (await markSubmitted(ctx, attemptRef(record), { accepted, known })) ?? record;
    return { kind: "result", result: txResultOf(now) } as const;
  }));
}

/**
 * Settles every attempt of the transaction; an attempt whose settlement could not take its turn
 * before the deadline, or kept losing to concurrent changes, is answered `submitted` (the
 * background settles it).
 */
async function settleAll(
  ctx: TxContext,
  storedEntries: Deno.KvEntry<TxRequestRecord>[],
  outcome: Parameters<typeof settleAttempt>[2],
  options: NonNullable<Parameters<typeof settleAttempt>[3]> & { accepted: boolean },
): Promise<AttemptOutcome[]> {
  const { accepted, ...settleOptions } = options;
  return await Promise.all(storedEntries.map(async (known) => {
    const record = known.value;
    const ref = attemptRef(record);
    let settled: TxRequestRecord | null;
    try {
      settled = await settleAttempt(ctx, ref, outcome, { ...settleOptions, known });
    } catch (error) {
      // The deadline came first, or the project's records kept changing (a round end on many
      // instances): the payout was sent either way, and the background settles it.
      const contended = error instanceof CommitConflictError;
      if (!options.signal?.aborted && !contended) throw error;
      log("warn", "Settlement left to the background", {
        projectId: ref.projectId,
        idempotencyKey: ref.key,
        reason: contended ? "contention" : "deadline",
      });
      settled = await markSubmitted(ctx, ref, { accepted });
    }
    return { kind: "result", result: txResultOf(settled ?? record) } as const;
  }));
}

/**
 * The signed transaction could not be stored, so nothing was sent: an attempt declared abandoned
 * meanwhile answers as it stands; one still unsigned is failed as the node's doing (its time ran
 * out while the node was slow).
 */
async function notStored(
  ctx: TxContext,
  entries: Deno.KvEntry<TxRequestRecord>[],
): Promise<AttemptOutcome[]> {
  const error = new BuildError("the RPC node did not answer in time");
  return await Promise.all(entries.map(async ({ value }) => {
    const current = await getTxRequest(ctx.kv, value.projectId, value.key) ?? value;
    if (current.attemptId === value.attemptId && !isFinal(current) && !current.signed) {
      await settleAttempt(ctx, attemptRef(current), { status: "failed", error: error.message }, {
        onlyIf: (record) => record.signed === null,
      });
      return { kind: "error", error: new ApiError(502, "rpc_error", error.message) } as const;
    }
    log("warn", "Signed transaction not sent: the attempt changed", {
      projectId: value.projectId,
      idempotencyKey: value.key,
    });
    return { kind: "result", result: txResultOf(current) } as const;
  }));
}

/**
 * Before a `failed` key is sent again, its latest attempt must be proven dead:
 *
 * | Latest attempt          | Dead when                                                          |
 * | ----------------------- | ------------------------------------------------------------------ |
 * | never signed            | always                                                             |
 * | refused on first send   | every other key on its signature (its bytes are stored with each,  |
 * |                         | and one still open would send them again) is settled, retried      |
 * |                         | alone or gone; one confirmed means the bytes paid this key too     |
 * | refused, shared, stored | the chain proves it, as for a sent attempt (its keys are not       |
 * | by an earlier version   | named, only counted)                                               |
 * | sent                    | landed and failed on-chain, or proven expired (`expiry_proof.ts`)  |
 *
 * Stores keep keys settled by versions whose proof a hiding node could fool, so the earlier
 * attempts' signatures are looked up again in the same call: any found landed makes the key
 * `confirmed` with that signature instead of paying again. An attempt not provable yet blocks the
 * retry; an unreachable RPC answers 502 `rpc_error`, the key staying `failed`, nothing sent.
 */
import type { Signature } from "@solana/kit";
import type { TxContext } from "../runtime.ts";
import { ApiError } from "../../../core/api_error.ts";
import { txRequestKey, type TxRequestRecord } from "../../../kv/tx_requests.ts";
import { rpcFailureReason } from "../rpc/chain_errors.ts";
import { callSignals, type Deadline } from "../rpc/timing.ts";
import { confirmOnChain } from "../rpc/confirm.ts";
import { type ChainVerdict, landedVerdict } from "../rpc/expiry_proof.ts";
import { isFinal } from "../lifecycle/lifecycle.ts";

/** What became of a failed key's attempts. */
export type RetryProof =
  | { kind: "dead" }
  /** An attempt of the key landed: `signature` paid. */
  | { kind: "landed"; signature: string }
  | { kind: "unproven" };

/** Proves the stored failed attempts dead, or finds one landed; throws 502 `rpc_error`. */
export async function proveEarlierAttempt(
  ctx: TxContext,
  stored: TxRequestRecord,
  options: { deadline?: Deadline } = {},
): Promise<RetryProof> {
  const rpc = ctx.rpc[stored.cluster];
  const signals = callSignals(ctx.tx.timing, options.deadline);
  const refused = stored.signed?.refused === true;
  const shared = refused && (stored.signed?.shared ?? 1) > 1;
  const siblings = shared ? await sharedKeysVerdict(ctx, stored) : null;
  if (siblings && siblings.kind !== "dead") return siblings;
  const proven = refused && !(shared && siblings === null);
  const latest = stored.signed && stored.signature && !proven
    ? { signature: stored.signature as Signature, signed: stored.signed }
    : null;
  const earlier = (stored.previous ?? []).map((p) => p.signature as Signature);
  const signatures = latest ? [...earlier, latest.signature] : earlier;
  try {
    if (!signatures.length) return { kind: "dead" };
    const { value } = await rpc.getSignatureStatuses(signatures, {
      searchTransactionHistory: true,
    }).send({ abortSignal: signals() });
    let waiting = false;
    for (const [i, status] of value.entries()) {
      if (!status) continue;
      const verdict = landedVerdict(status);
      if (verdict.kind === "confirmed") return { kind: "landed", signature: signatures[i]! };
      if (verdict.kind === "unconfirmed") waiting = true;
    }
    if (waiting) return { kind: "unproven" };
    if (!latest) return { kind: "dead" };
    const found = value.at(-1);
    const verdict: ChainVerdict = await confirmOnChain(rpc, {
      ...latest,
      attemptId: stored.attemptId,
    }, {
      signals,
      status: found ?? null,
    });
    return verdict.kind === "unconfirmed" || verdict.kind === "unproven"
      ? { kind: "unproven" }
      : { kind: "dead" };
  } catch (error) {
    throw new ApiError("rpc_error", `Could not build the transaction: ${rpcFailureReason(error)}`);
  }
}

/**
 * What the other keys of a refused shared attempt say of its signature: `landed` when one is
 * confirmed on it, `unproven` while one is still open on it (its confirmation may send the bytes),
 * `dead` otherwise; null when the attempt does not name them (stored by an earlier version).
 */
async function sharedKeysVerdict(
  ctx: TxContext,
  stored: TxRequestRecord,
): Promise<RetryProof | null> {
  const keys = stored.signed?.sharedKeys;
  if (!keys) return null;
  const others = keys.filter((key) => key !== stored.key);
  const entries = await ctx.kv.getMany<TxRequestRecord[]>(
    others.map((key) => txRequestKey(stored.projectId, key)),
  );
  let open = false;
  for (const { value } of entries) {
    // Gone (kept only so long) or on an attempt of its own: it sends these bytes no more.
    if (!value || value.signature !== stored.signature) continue;
    if (value.status === "confirmed") return { kind: "landed", signature: stored.signature! };
    if (!isFinal(value)) open = true;
  }
  return open ? { kind: "unproven" } : { kind: "dead" };
}

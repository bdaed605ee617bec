/**
 * Before a `failed` key is retried, its latest attempt must be proven dead: never signed, refused
 * by the node on its first send (so never forwarded), landed and failed on-chain, or proven
 * expired (`expiry_proof.ts`, the one rule). A refusal proves a shared transaction dead only with
 * every other key it pays: its bytes are stored with each of them, and one still open would send
 * them again (paying this key too). So each key sharing the signature must be settled (as the
 * refusal's one commit leaves them, `transitions.ts`), retried with an attempt of its own or gone;
 * one confirmed means the bytes landed and paid this key. A shared attempt stored by an earlier
 * version does not name its keys (only their count), and its refusal proves nothing: the chain
 * must, by the same rule as any attempt. Its earlier attempts were proven dead when they gave
 * way, but stores keep keys settled by versions whose proof a node could fool (one hiding its
 * history), so their signatures are looked up again in the same call: any attempt found landed
 * makes the key `confirmed` with that signature instead of paying again. An attempt that cannot be
 * proven dead yet blocks the retry; an RPC that cannot be reached answers 502 `rpc_error`, the key
 * staying `failed` with nothing sent.
 */
import type { Signature } from "@solana/kit";
import type { TxContext } from "./runtime.ts";
import { ApiError } from "../../core/api_error.ts";
import { txRequestKey, type TxRequestRecord } from "../../kv/tx_requests.ts";
import { rpcFailureReason } from "./chain_errors.ts";
import { callSignals, type Deadline } from "./timing.ts";
import { confirmOnChain } from "./confirm.ts";
import { type ChainVerdict, landedVerdict } from "./expiry_proof.ts";
import { isFinal } from "./lifecycle.ts";

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

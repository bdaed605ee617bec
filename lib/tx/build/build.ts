/**
 * Step 14: builds a transaction with `@solana/kit` and signs the compiled message with the wallet
 * provider. Token instructions use the mint's own program (Token or Token-2022) both for the
 * associated account derivation and for the instruction itself. A transaction carries one or
 * more payments of one kind and asset (a batch's items share one transaction and one fee, at most
 * `MAX_SHARED_PAYMENTS` of their kind, which always fit Solana's 1,232 bytes), each the payment of
 * one reserved attempt, whose id is in the memo.
 */
import {
  type Address,
  address,
  appendTransactionMessageInstructions,
  compileTransactionMessage,
  createNoopSigner,
  createTransactionMessage,
  type Instruction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
} from "@solana/kit";
import { getTransferSolInstruction, SYSTEM_PROGRAM_ADDRESS } from "@solana-program/system";
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getMintToCheckedInstruction,
  getTransferCheckedInstruction,
} from "@solana-program/token";
import {
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  getSetComputeUnitLimitInstruction,
  getSetComputeUnitPriceInstruction,
} from "@solana-program/compute-budget";
import type { TxContext } from "../runtime.ts";
import type { MintInfo } from "../../chain/mints.ts";
import type { SignedTx } from "../../../kv/tx_requests.ts";
import { ApiError } from "../../../core/api_error.ts";
import { WalletUnavailableError } from "../../wallets/provider.ts";
import { retryRead, rpcFailureReason } from "../rpc/chain_errors.ts";
import { type Deadline, rpcSignal } from "../rpc/timing.ts";
import { abortable } from "../../../core/deadline.ts";
import { computeUnitLimit, fetchComputeUnitPrice } from "./priority_fee.ts";
import type { TxKind, TxRouteKind } from "../../../core/events.ts";
import type { Cluster } from "../../../core/cluster.ts";
import { encodeMessage, signedWire } from "../../chain/wire.ts";

/** The SPL Memo program (v3). */
const MEMO_PROGRAM = address("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");

/**
 * The programs a SOL transfer calls (the compute budget program only on mainnet, refused on every
 * cluster so the rule does not depend on one): none can be its recipient, whose account the
 * transfer writes, since an account a transaction calls is never writable in it. Step 8 refuses
 * them, before any key is reserved.
 */
export const SOL_TRANSFER_PROGRAMS: readonly Address[] = [
  SYSTEM_PROGRAM_ADDRESS,
  COMPUTE_BUDGET_PROGRAM_ADDRESS,
  MEMO_PROGRAM,
];

/** One payment of a transaction: a reserved attempt's recipient and amount. */
export interface TxPayment {
  /** The attempt's unique id, written in the memo. */
  attemptId: string;
  recipient: Address;
  amount: bigint;
}

/** What the transaction does: payments of one kind and asset from the managed wallet. */
export interface TxPlan {
  projectId: string;
  cluster: Cluster;
  kind: TxKind;
  walletAddress: Address;
  mint: MintInfo | null;
  payments: TxPayment[];
}

/**
 * Most payments one transaction carries, by kind: what always fits in 1,232 bytes with the memo
 * of their attempt ids and, on mainnet, the compute budget (`tests/tx/wire_test.ts` builds the
 * largest), and what the one commit settling all their keys can check within the store's 10
 * checks: one per key, plus the event feed and the webhook endpoints (`settleTransaction`).
 */
export function maxSharedPayments(kind: TxKind): number {
  return kind === "transfer-sol" ? 8 : 6;
}

/** The RPC could not be used to build the transaction; the attempt fails with 502 `rpc_error`. */
export class BuildError extends Error {
  constructor(reason: string) {
    super(`Could not build the transaction: ${reason}`);
    this.name = "BuildError";
  }
}

/** A signed transaction ready to store and send. */
interface BuiltTx {
  signature: string;
  tx: Omit<SignedTx, "signedAt">;
}

/** Builds and signs the plan's transaction; throws `BuildError` or `WalletUnavailableError`. */
async function buildSignedTx(
  ctx: TxContext,
  plan: TxPlan,
  options: { deadline: Deadline },
): Promise<BuiltTx> {
  const rpc = ctx.rpc[plan.cluster];
  const payer = createNoopSigner(plan.walletAddress);
  if (plan.payments.length < 1 || plan.payments.length > maxSharedPayments(plan.kind)) {
    throw new Error(`Cannot build a transaction of ${plan.payments.length} payments`);
  }
  // The memo makes every attempt's transaction unique: two requests with the same recipient and
  // amount signed against the same blockhash would otherwise be byte-identical, and the network
  // would drop the second as a duplicate of the first. It names every attempt the transaction pays.
  // A withdrawal moves SOL or a token as a transfer of it does.
  const kind = plan.kind === "withdraw"
    ? (plan.mint ? "transfer-token" : "transfer-sol")
    : plan.kind;
  const instructions = [
    ...(await planInstructions(plan, kind)),
    memoInstruction(plan.payments.map((p) => p.attemptId).join(" ")),
  ];
  const writable = writableAccounts(instructions);
  const { deadline } = options;
  const timing = ctx.tx.timing;
  let latest;
  let price: bigint | null = null;
  try {
    [latest, price] = await Promise.all([
      // A load already in flight for another request is shared, and waited for until our deadline.
      abortable(
        ctx.tx.blockhashes.get(plan.cluster, async () => {
          const { context, value } = await retryRead(
            (abortSignal) =>
              rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal }),
            { timing },
          );
          // At "confirmed", the answer's context slot is the slot of the blockhash's own block.
          return { ...value, slot: context.slot };
        }),
        deadline.signal,
      ),
      plan.cluster === "mainnet"
        ? fetchComputeUnitPrice(rpc, writable, { abortSignal: rpcSignal(timing, deadline) })
        : Promise.resolve(null),
    ]);
  } catch (error) {
    throw new BuildError(rpcFailureReason(error));
  }
  const budget = price === null ? [] : [
    getSetComputeUnitLimitInstruction({
      units: computeUnitLimit(kind, plan.payments.length),
    }),
    getSetComputeUnitPriceInstruction({ microLamports: price }),
  ];
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => appendTransactionMessageInstructions([...budget, ...instructions], m),
  );
  // Kit orders the accounts; the bytes are written without its codecs (`lib/chain/wire.ts`).
  const compiled = compileTransactionMessage(message);
  if (compiled.header.numSignerAccounts !== 1) {
    throw new Error("Cannot build the transaction: the managed wallet must be its only signer");
  }
  const messageBytes = encodeMessage(compiled);
  const { signature, wire } = signedWire(
    messageBytes,
    await ctx.wallets.signMessage(plan.projectId, messageBytes),
  );
  return {
    signature,
    tx: {
      wire,
      blockhash: latest.blockhash,
      lastValidBlockHeight: latest.lastValidBlockHeight,
      blockhashSlot: latest.slot,
      accepted: false,
    },
  };
}

/** A plan built and signed (its bytes to store with its attempts), or why it could not be. */
export type SignOutcome =
  | { kind: "signed"; signature: string; tx: SignedTx }
  | {
    kind: "unbuilt";
    /** The attempts' 502, or null for an internal error (`cause`, thrown once they are failed). */
    failure: ApiError | null;
    message: string;
    cause: unknown;
  };

/** Builds and signs the plan's transaction; never throws (a failure is an `unbuilt` outcome). */
export async function signPlan(
  ctx: TxContext,
  plan: TxPlan,
  options: { deadline: Deadline },
): Promise<SignOutcome> {
  try {
    const built = await buildSignedTx(ctx, plan, options);
    return {
      kind: "signed",
      signature: built.signature,
      tx: { ...built.tx, signedAt: ctx.clock.now() },
    };
  } catch (cause) {
    const failure = cause instanceof BuildError
      ? new ApiError("rpc_error", cause.message)
      : cause instanceof WalletUnavailableError
      ? new ApiError("wallet_unavailable", cause.message)
      : null;
    const message = failure?.message ?? "Could not build the transaction: internal error";
    return { kind: "unbuilt", failure, message, cause };
  }
}

async function planInstructions(plan: TxPlan, kind: TxRouteKind): Promise<Instruction[]> {
  const payer = createNoopSigner(plan.walletAddress);
  if (kind === "transfer-sol") {
    return plan.payments.map((payment) =>
      getTransferSolInstruction({
        source: payer,
        destination: payment.recipient,
        amount: payment.amount,
      })
    );
  }
  const mint = plan.mint!;
  const tokenProgram = mint.programAddress;
  const [source] = kind === "transfer-token"
    ? await findAssociatedTokenPda({ owner: plan.walletAddress, mint: mint.address, tokenProgram })
    : [null];
  const instructions: Instruction[] = [];
  for (const payment of plan.payments) {
    const [destination] = await findAssociatedTokenPda({
      owner: payment.recipient,
      mint: mint.address,
      tokenProgram,
    });
    instructions.push(getCreateAssociatedTokenIdempotentInstruction({
      payer,
      ata: destination,
      owner: payment.recipient,
      mint: mint.address,
      tokenProgram,
    }));
    instructions.push(
      source === null
        ? getMintToCheckedInstruction({
          mint: mint.address,
          token: destination,
          mintAuthority: payer,
          amount: payment.amount,
          decimals: mint.decimals,
        }, { programAddress: tokenProgram })
        : getTransferCheckedInstruction({
          source,
          mint: mint.address,
          destination,
          authority: payer,
          amount: payment.amount,
          decimals: mint.decimals,
        }, { programAddress: tokenProgram }),
    );
  }
  return instructions;
}

/** The memo instruction writing `text` (a payout's attempt ids). */
export function memoInstruction(text: string): Instruction {
  return { programAddress: MEMO_PROGRAM, data: new TextEncoder().encode(text) };
}

// AccountRole: WRITABLE = 1, WRITABLE_SIGNER = 3 (the low bit marks writable).
function writableAccounts(instructions: Instruction[]): Address[] {
  const found = new Set<Address>();
  for (const ix of instructions) {
    for (const meta of ix.accounts ?? []) if (meta.role & 1) found.add(meta.address);
  }
  return [...found];
}

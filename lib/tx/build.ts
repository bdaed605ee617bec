/**
 * Step 14: builds the attempt's transaction with `@solana/kit` and signs the compiled message with
 * the wallet provider. Token instructions use the mint's own program (Token or Token-2022) both
 * for the associated account derivation and for the instruction itself.
 */
import {
  type Address,
  address,
  appendTransactionMessageInstructions,
  compileTransaction,
  createNoopSigner,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  getSignatureFromTransaction,
  type Instruction,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  type SignatureBytes,
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
import type { TxContext } from "./runtime.ts";
import type { MintInfo } from "../chain/mints.ts";
import type { SignedTx } from "../../kv/tx_requests.ts";
import { retryRead, rpcFailureReason } from "./chain_errors.ts";
import { type Deadline, rpcSignal } from "./timing.ts";
import { abortable } from "../../core/deadline.ts";
import { computeUnitLimit, fetchComputeUnitPrice } from "./priority_fee.ts";
import type { TxKind, TxRouteKind } from "../../core/events.ts";
import type { Cluster } from "../../core/cluster.ts";

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

/** What the transaction does. */
export interface TxPlan {
  projectId: string;
  /** The attempt's unique id, written as a memo. */
  attemptId: string;
  cluster: Cluster;
  kind: TxKind;
  walletAddress: Address;
  recipient: Address;
  mint: MintInfo | null;
  amount: bigint;
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
export async function buildSignedTx(
  ctx: TxContext,
  plan: TxPlan,
  options: { deadline: Deadline },
): Promise<BuiltTx> {
  const rpc = ctx.rpc[plan.cluster];
  const payer = createNoopSigner(plan.walletAddress);
  // The memo makes every attempt's transaction unique: two requests with the same recipient and
  // amount signed against the same blockhash would otherwise be byte-identical, and the network
  // would drop the second as a duplicate of the first.
  // A withdrawal moves SOL or a token as a transfer of it does.
  const kind = plan.kind === "withdraw"
    ? (plan.mint ? "transfer-token" : "transfer-sol")
    : plan.kind;
  const instructions = [...await planInstructions(plan, kind), memoInstruction(plan.attemptId)];
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
    getSetComputeUnitLimitInstruction({ units: computeUnitLimit(kind) }),
    getSetComputeUnitPriceInstruction({ microLamports: price }),
  ];
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayerSigner(payer, m),
    (m) => setTransactionMessageLifetimeUsingBlockhash(latest, m),
    (m) => appendTransactionMessageInstructions([...budget, ...instructions], m),
  );
  const compiled = compileTransaction(message);
  const signatureBytes = await ctx.wallets.signMessage(
    plan.projectId,
    new Uint8Array(compiled.messageBytes),
  );
  const signed = {
    ...compiled,
    signatures: Object.freeze({
      ...compiled.signatures,
      [plan.walletAddress]: signatureBytes as SignatureBytes,
    }),
  };
  return {
    signature: getSignatureFromTransaction(signed),
    tx: {
      wire: getBase64EncodedWireTransaction(signed),
      blockhash: latest.blockhash,
      lastValidBlockHeight: latest.lastValidBlockHeight,
      blockhashSlot: latest.slot,
      accepted: false,
    },
  };
}

async function planInstructions(plan: TxPlan, kind: TxRouteKind): Promise<Instruction[]> {
  const payer = createNoopSigner(plan.walletAddress);
  if (kind === "transfer-sol") {
    return [getTransferSolInstruction({
      source: payer,
      destination: plan.recipient,
      amount: plan.amount,
    })];
  }
  const mint = plan.mint!;
  const tokenProgram = mint.programAddress;
  const [destination] = await findAssociatedTokenPda({
    owner: plan.recipient,
    mint: mint.address,
    tokenProgram,
  });
  const createDestination = getCreateAssociatedTokenIdempotentInstruction({
    payer,
    ata: destination,
    owner: plan.recipient,
    mint: mint.address,
    tokenProgram,
  });
  if (kind === "mint-token") {
    return [
      createDestination,
      getMintToCheckedInstruction({
        mint: mint.address,
        token: destination,
        mintAuthority: payer,
        amount: plan.amount,
        decimals: mint.decimals,
      }, { programAddress: tokenProgram }),
    ];
  }
  const [source] = await findAssociatedTokenPda({
    owner: plan.walletAddress,
    mint: mint.address,
    tokenProgram,
  });
  return [
    createDestination,
    getTransferCheckedInstruction({
      source,
      mint: mint.address,
      destination,
      authority: payer,
      amount: plan.amount,
      decimals: mint.decimals,
    }, { programAddress: tokenProgram }),
  ];
}

function memoInstruction(text: string): Instruction {
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
